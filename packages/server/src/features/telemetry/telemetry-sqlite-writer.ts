import type SqliteDatabase from 'better-sqlite3';
import type { Db } from '../../db/database.js';
import { mergeSerialized } from '../../lib/log-histogram.js';
import { type EventRow, foldBatch } from './rollup-fold.js';
import type { TelemetryWriter } from './telemetry-store.js';

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
 * SQLite's writer: prepared statements run row by row inside one transaction (better-sqlite3
 * is synchronous, so a 1,000-row batch costs a few microseconds a row with no SQL building).
 * It runs while holding Kysely's single connection, so no other query interleaves.
 */
export function createSqliteTelemetryWriter(db: Db): TelemetryWriter {
  const sqlite = db.sqlite;
  if (!sqlite) throw new Error('The SQLite telemetry writer needs the better-sqlite3 handle');
  registerSqliteFunctions(sqlite);
  let write: ((rows: readonly EventRow[]) => EventRow[]) | undefined;

  // Prepared on first use: the tables exist only once migrations have run.
  function prepare() {
    const insertEvent = sqlite!.prepare(`
      INSERT INTO telemetry_events (org_id, ts, request_id, agent_id, method, url_host, url_path, status_code, latency_ms,
        policy_result, deny_reason, trace_id, span_id, gen_ai, received_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`);
    const upsertAgent = sqlite!.prepare(`
      INSERT INTO telemetry_rollups (org_id, grain, bucket_start, agent_id, total_calls, allowed_calls, denied_calls, error_calls,
        latency_count, latency_sum, latency_hist)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (org_id, grain, bucket_start, agent_id) DO UPDATE SET ${counts('telemetry_rollups')},
        latency_count = telemetry_rollups.latency_count + excluded.latency_count,
        latency_sum = telemetry_rollups.latency_sum + excluded.latency_sum,
        latency_hist = corral_hist_merge(telemetry_rollups.latency_hist, excluded.latency_hist)`);
    const upsertHost = sqlite!.prepare(`
      INSERT INTO telemetry_host_rollups (org_id, grain, bucket_start, url_host, total_calls, allowed_calls, denied_calls, error_calls)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (org_id, grain, bucket_start, url_host) DO UPDATE SET ${counts('telemetry_host_rollups')}`);
    const upsertRule = sqlite!.prepare(`
      INSERT INTO telemetry_rule_rollups (org_id, grain, bucket_start, rule_name, total_calls, denied_calls, dry_run_calls)
      VALUES (?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (org_id, grain, bucket_start, rule_name) DO UPDATE SET
        total_calls = telemetry_rule_rollups.total_calls + excluded.total_calls,
        denied_calls = telemetry_rule_rollups.denied_calls + excluded.denied_calls,
        dry_run_calls = telemetry_rule_rollups.dry_run_calls + excluded.dry_run_calls`);

    return sqlite!.transaction((rows: readonly EventRow[]): EventRow[] => {
      const stored: EventRow[] = [];
      for (const r of rows) {
        const result = insertEvent.run(r.org_id, r.ts, r.request_id, r.agent_id, r.method, r.url_host, r.url_path, r.status_code,
          r.latency_ms, r.policy_result, r.deny_reason, r.trace_id, r.span_id, r.gen_ai, r.received_at);
        if (result.changes > 0) stored.push(r);
      }
      const orgId = rows[0]?.org_id;
      if (stored.length === 0 || orgId === undefined) return stored;
      const folded = foldBatch(stored);
      for (const a of folded.agents) {
        upsertAgent.run(orgId, a.grain, a.bucket_start, a.agent_id, a.total_calls, a.allowed_calls, a.denied_calls, a.error_calls,
          a.latency_count, a.latency_sum, a.latency_hist);
      }
      for (const h of folded.hosts) {
        upsertHost.run(orgId, h.grain, h.bucket_start, h.url_host, h.total_calls, h.allowed_calls, h.denied_calls, h.error_calls);
      }
      for (const r of folded.rules) upsertRule.run(orgId, r.grain, r.bucket_start, r.rule_name, r.total_calls, r.denied_calls, r.dry_run_calls);
      return stored;
    });
  }

  return {
    async write(rows) {
      return db.kysely.connection().execute(async () => {
        write ??= prepare();
        return write(rows);
      });
    },
  };
}
