import type SqliteDatabase from 'better-sqlite3';
import { mergeSerialized } from '../../lib/log-histogram.js';
import { type EventRow, foldBatch } from './rollup-fold.js';

/*
 * SQLite's batch transaction, shared by the two ways it runs (telemetry-sqlite-writer.ts): on
 * the writer thread for a database file, in the calling thread for an in-memory database.
 * Imports nothing that needs the rest of the service, so the writer thread loads little.
 */

const registered = new WeakSet<SqliteDatabase.Database>();

/** The same SQL function PostgreSQL gets from migration 0003, so rollup upserts read alike. */
export function registerSqliteFunctions(sqlite: SqliteDatabase.Database): void {
  if (registered.has(sqlite)) return;
  sqlite.function('corral_hist_merge', { deterministic: true }, (a: unknown, b: unknown) =>
    mergeSerialized(typeof a === 'string' ? a : null, typeof b === 'string' ? b : null));
  registered.add(sqlite);
}

const counts = (t: string) =>
  `total_calls = ${t}.total_calls + excluded.total_calls, allowed_calls = ${t}.allowed_calls + excluded.allowed_calls,
   denied_calls = ${t}.denied_calls + excluded.denied_calls, error_calls = ${t}.error_calls + excluded.error_calls`;

/**
 * Prepares the statements (the tables must exist: call after migrations) and answers the batch
 * transaction: prepared statements run row by row (better-sqlite3 is synchronous, so there is no
 * SQL to build), events whose request_id the organization already has are skipped, the rest
 * are folded into the rollups. Answers the indexes, in `rows`, of the events it stored.
 * IMMEDIATE: the write lock is taken at BEGIN, so another connection's writer makes it wait
 * (busy timeout) rather than fail half way.
 */
export function prepareSqliteBatchWrite(sqlite: SqliteDatabase.Database): (rows: readonly EventRow[]) => number[] {
  registerSqliteFunctions(sqlite);
  const insertEvent = sqlite.prepare(`
    INSERT INTO telemetry_events (org_id, ts, request_id, agent_id, method, url_host, url_path, status_code, latency_ms,
      policy_result, deny_reason, trace_id, span_id, gen_ai, received_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`);
  const upsertAgent = sqlite.prepare(`
    INSERT INTO telemetry_rollups (org_id, grain, bucket_start, agent_id, total_calls, allowed_calls, denied_calls, error_calls,
      latency_count, latency_sum, latency_hist)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (org_id, grain, bucket_start, agent_id) DO UPDATE SET ${counts('telemetry_rollups')},
      latency_count = telemetry_rollups.latency_count + excluded.latency_count,
      latency_sum = telemetry_rollups.latency_sum + excluded.latency_sum,
      latency_hist = corral_hist_merge(telemetry_rollups.latency_hist, excluded.latency_hist)`);
  const upsertHost = sqlite.prepare(`
    INSERT INTO telemetry_host_rollups (org_id, grain, bucket_start, url_host, total_calls, allowed_calls, denied_calls, error_calls)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (org_id, grain, bucket_start, url_host) DO UPDATE SET ${counts('telemetry_host_rollups')}`);
  const upsertRule = sqlite.prepare(`
    INSERT INTO telemetry_rule_rollups (org_id, grain, bucket_start, rule_name, total_calls, denied_calls, dry_run_calls)
    VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (org_id, grain, bucket_start, rule_name) DO UPDATE SET
      total_calls = telemetry_rule_rollups.total_calls + excluded.total_calls,
      denied_calls = telemetry_rule_rollups.denied_calls + excluded.denied_calls,
      dry_run_calls = telemetry_rule_rollups.dry_run_calls + excluded.dry_run_calls`);

  const upsertModel = sqlite.prepare(`
    INSERT INTO telemetry_model_rollups (org_id, grain, bucket_start, agent_id, provider, model, calls, input_tokens, output_tokens,
      cached_input_tokens, reasoning_tokens)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (org_id, grain, bucket_start, agent_id, provider, model) DO UPDATE SET
      calls = telemetry_model_rollups.calls + excluded.calls,
      input_tokens = telemetry_model_rollups.input_tokens + excluded.input_tokens,
      output_tokens = telemetry_model_rollups.output_tokens + excluded.output_tokens,
      cached_input_tokens = telemetry_model_rollups.cached_input_tokens + excluded.cached_input_tokens,
      reasoning_tokens = telemetry_model_rollups.reasoning_tokens + excluded.reasoning_tokens`);

  const transaction = sqlite.transaction((rows: readonly EventRow[]): number[] => {
    const indexes: number[] = [];
    const stored: EventRow[] = [];
    rows.forEach((r, i) => {
      const result = insertEvent.run(r.org_id, r.ts, r.request_id, r.agent_id, r.method, r.url_host, r.url_path, r.status_code,
        r.latency_ms, r.policy_result, r.deny_reason, r.trace_id, r.span_id, r.gen_ai, r.received_at);
      if (result.changes > 0) {
        indexes.push(i);
        stored.push(r);
      }
    });
    const orgId = rows[0]?.org_id;
    if (stored.length === 0 || orgId === undefined) return indexes;
    const folded = foldBatch(stored);
    for (const a of folded.agents) {
      upsertAgent.run(orgId, a.grain, a.bucket_start, a.agent_id, a.total_calls, a.allowed_calls, a.denied_calls, a.error_calls,
        a.latency_count, a.latency_sum, a.latency_hist);
    }
    for (const h of folded.hosts) {
      upsertHost.run(orgId, h.grain, h.bucket_start, h.url_host, h.total_calls, h.allowed_calls, h.denied_calls, h.error_calls);
    }
    for (const r of folded.rules) upsertRule.run(orgId, r.grain, r.bucket_start, r.rule_name, r.total_calls, r.denied_calls, r.dry_run_calls);
    for (const m of folded.models) {
      upsertModel.run(orgId, m.grain, m.bucket_start, m.agent_id, m.provider, m.model, m.calls, m.input_tokens, m.output_tokens,
        m.cached_input_tokens, m.reasoning_tokens);
    }
    return indexes;
  });
  return (rows) => transaction.immediate(rows);
}
