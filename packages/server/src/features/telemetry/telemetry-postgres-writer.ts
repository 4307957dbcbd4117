import type pg from 'pg';
import type { PostgresDb } from '../../db/database.js';
import { translateStoreError } from '../../db/translate-error.js';
import type { PartitionManager } from './event-partitions.js';
import { type EventRow, foldBatch } from './rollup-fold.js';
import type { TelemetryWriter } from './telemetry-writer.js';

const counts = `total_calls = t.total_calls + excluded.total_calls, allowed_calls = t.allowed_calls + excluded.allowed_calls,
  denied_calls = t.denied_calls + excluded.denied_calls, error_calls = t.error_calls + excluded.error_calls`;

/*
 * Rows travel as one JSON parameter and are unpacked by json_to_recordset on the server: one
 * JSON.stringify (native) instead of pg turning fifteen 1,000-element arrays into escaped array
 * literals in JavaScript, which was most of the writer's time on the Node side. Named
 * statements are parsed and planned once per connection, with a fixed text whatever the batch.
 */
const eventColumns = `ts int8, request_id text, agent_id uuid, method text, url_host text, url_path text, status_code int4,
  latency_ms int4, policy_result text, deny_reason text, trace_id text, span_id text, gen_ai text, received_at int8`;

const statements = {
  // Claims the request ids (sorted, so two batches sharing ids wait on each other in one order
  // instead of deadlocking) and inserts the events whose id was new, in one round trip. Answers
  // null when every event was stored, else the ids of those that were.
  storeEvents: `
    WITH input AS (SELECT * FROM json_to_recordset($2::json) AS r(${eventColumns})),
    claimed AS (
      INSERT INTO telemetry_request_ids (org_id, request_id, ts)
      SELECT $1, request_id, ts FROM input ORDER BY request_id
      ON CONFLICT DO NOTHING RETURNING request_id
    ),
    stored AS (
      INSERT INTO telemetry_events (org_id, ts, request_id, agent_id, method, url_host, url_path, status_code, latency_ms,
        policy_result, deny_reason, trace_id, span_id, gen_ai, received_at)
      SELECT $1, i.ts, i.request_id, i.agent_id, i.method, i.url_host, i.url_path, i.status_code, i.latency_ms,
        i.policy_result, i.deny_reason, i.trace_id, i.span_id, i.gen_ai, i.received_at
      FROM input i JOIN claimed USING (request_id)
      RETURNING request_id
    )
    SELECT CASE WHEN count(*) < $3 THEN COALESCE(array_agg(request_id), '{}') END AS ids FROM stored`,
  // The four rollup upserts in one round trip; each input is already sorted by key.
  upsertRollups: `
    WITH agents AS (
      INSERT INTO telemetry_rollups AS t (org_id, grain, bucket_start, agent_id, total_calls, allowed_calls, denied_calls,
        error_calls, latency_count, latency_sum, latency_hist)
      SELECT $1, * FROM json_to_recordset($2::json) AS r(grain int4, bucket_start int8, agent_id uuid, total_calls int8,
        allowed_calls int8, denied_calls int8, error_calls int8, latency_count int8, latency_sum int8, latency_hist text)
      ON CONFLICT (org_id, grain, bucket_start, agent_id) DO UPDATE SET ${counts},
        latency_count = t.latency_count + excluded.latency_count, latency_sum = t.latency_sum + excluded.latency_sum,
        latency_hist = corral_hist_merge(t.latency_hist, excluded.latency_hist)
    ),
    hosts AS (
      INSERT INTO telemetry_host_rollups AS t (org_id, grain, bucket_start, url_host, total_calls, allowed_calls,
        denied_calls, error_calls)
      SELECT $1, * FROM json_to_recordset($3::json) AS r(grain int4, bucket_start int8, url_host text, total_calls int8,
        allowed_calls int8, denied_calls int8, error_calls int8)
      ON CONFLICT (org_id, grain, bucket_start, url_host) DO UPDATE SET ${counts}
    ),
    rules AS (
      INSERT INTO telemetry_rule_rollups AS t (org_id, grain, bucket_start, rule_name, total_calls, denied_calls, dry_run_calls)
      SELECT $1, * FROM json_to_recordset($4::json) AS r(grain int4, bucket_start int8, rule_name text, total_calls int8,
        denied_calls int8, dry_run_calls int8)
      ON CONFLICT (org_id, grain, bucket_start, rule_name) DO UPDATE SET total_calls = t.total_calls + excluded.total_calls,
        denied_calls = t.denied_calls + excluded.denied_calls, dry_run_calls = t.dry_run_calls + excluded.dry_run_calls
    ),
    models AS (
      INSERT INTO telemetry_model_rollups AS t (org_id, grain, bucket_start, agent_id, provider, model, calls, input_tokens,
        output_tokens, cached_input_tokens, reasoning_tokens)
      SELECT $1, * FROM json_to_recordset($5::json) AS r(grain int4, bucket_start int8, agent_id uuid, provider text, model text,
        calls int8, input_tokens int8, output_tokens int8, cached_input_tokens int8, reasoning_tokens int8)
      ON CONFLICT (org_id, grain, bucket_start, agent_id, provider, model) DO UPDATE SET calls = t.calls + excluded.calls,
        input_tokens = t.input_tokens + excluded.input_tokens, output_tokens = t.output_tokens + excluded.output_tokens,
        cached_input_tokens = t.cached_input_tokens + excluded.cached_input_tokens,
        reasoning_tokens = t.reasoning_tokens + excluded.reasoning_tokens
    )
    SELECT 1`,
};

/** Stores the batch's first event per request_id when the organization has not seen that id. Answers the stored rows, in batch order. */
async function storeEvents(client: pg.PoolClient, orgId: string, rows: readonly EventRow[]): Promise<EventRow[]> {
  const firstById = new Map<string, EventRow>();
  for (const r of rows) if (!firstById.has(r.request_id)) firstById.set(r.request_id, r);
  const unique = [...firstById.values()];
  const result = await client.query<{ ids: string[] | null }>({
    name: 'telemetry_store_events', text: statements.storeEvents,
    values: [orgId, JSON.stringify(unique), unique.length],
  });
  const ids = result.rows[0]?.ids;
  if (!ids) return unique.length === rows.length ? [...rows] : unique;
  const fresh = new Set(ids);
  return unique.filter((r) => fresh.has(r.request_id));
}

async function upsertRollups(client: pg.PoolClient, orgId: string, rows: readonly EventRow[]): Promise<void> {
  const { agents, hosts, rules, models } = foldBatch(rows);
  await client.query({
    name: 'telemetry_upsert_rollups', text: statements.upsertRollups,
    values: [orgId, JSON.stringify(agents), JSON.stringify(hosts), JSON.stringify(rules), JSON.stringify(models)],
  });
}

/**
 * PostgreSQL's writer: one transaction on one pooled connection: claim request ids and insert
 * the fresh events, then fold them into the rollups (hot rows last, so their locks are held briefly).
 */
export function createPostgresTelemetryWriter({ pool }: Pick<PostgresDb, 'pool'>, partitions: PartitionManager): TelemetryWriter {
  return {
    async write(rows) {
      const orgId = rows[0]?.org_id;
      if (orgId === undefined) return [];
      await partitions.ensureFor(rows.map((r) => r.ts));
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        throw translateStoreError('postgres', err);
      }
      try {
        await client.query('BEGIN');
        const fresh = await storeEvents(client, orgId, rows);
        if (fresh.length > 0) await upsertRollups(client, orgId, fresh);
        await client.query('COMMIT');
        return fresh;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw translateStoreError('postgres', err);
      } finally {
        client.release();
      }
    },
  };
}
