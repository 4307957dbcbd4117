import type pg from 'pg';
import { type EventRow, foldBatch } from './rollup-fold.js';
import type { PartitionManager } from './event-partitions.js';
import type { TelemetryWriter } from './telemetry-store.js';

const counts = `total_calls = t.total_calls + excluded.total_calls, allowed_calls = t.allowed_calls + excluded.allowed_calls,
  denied_calls = t.denied_calls + excluded.denied_calls, error_calls = t.error_calls + excluded.error_calls`;

// Named statements are parsed and planned once per connection; arrays through unnest() make a
// 1,000-row insert one round trip with a fixed statement text.
const statements = {
  claimIds: `INSERT INTO telemetry_request_ids (org_id, request_id, ts)
    SELECT $1, r, t FROM unnest($2::text[], $3::int8[]) AS u(r, t) ON CONFLICT DO NOTHING RETURNING request_id`,
  insertEvents: `INSERT INTO telemetry_events (org_id, ts, request_id, agent_id, method, url_host, url_path, status_code, latency_ms,
      policy_result, deny_reason, trace_id, span_id, gen_ai, received_at)
    SELECT $1, * FROM unnest($2::int8[], $3::text[], $4::uuid[], $5::text[], $6::text[], $7::text[], $8::int4[], $9::int4[],
      $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::int8[])`,
  upsertAgents: `INSERT INTO telemetry_rollups AS t (org_id, grain, bucket_start, agent_id, total_calls, allowed_calls, denied_calls,
      error_calls, latency_count, latency_sum, latency_hist)
    SELECT $1, * FROM unnest($2::int4[], $3::int8[], $4::uuid[], $5::int8[], $6::int8[], $7::int8[], $8::int8[], $9::int8[],
      $10::int8[], $11::text[])
    ON CONFLICT (org_id, grain, bucket_start, agent_id) DO UPDATE SET ${counts},
      latency_count = t.latency_count + excluded.latency_count, latency_sum = t.latency_sum + excluded.latency_sum,
      latency_hist = corral_hist_merge(t.latency_hist, excluded.latency_hist)`,
  upsertHosts: `INSERT INTO telemetry_host_rollups AS t (org_id, grain, bucket_start, url_host, total_calls, allowed_calls,
      denied_calls, error_calls)
    SELECT $1, * FROM unnest($2::int4[], $3::int8[], $4::text[], $5::int8[], $6::int8[], $7::int8[], $8::int8[])
    ON CONFLICT (org_id, grain, bucket_start, url_host) DO UPDATE SET ${counts}`,
  upsertRules: `INSERT INTO telemetry_rule_rollups AS t (org_id, grain, bucket_start, rule_name, total_calls, denied_calls, dry_run_calls)
    SELECT $1, * FROM unnest($2::int4[], $3::int8[], $4::text[], $5::int8[], $6::int8[], $7::int8[])
    ON CONFLICT (org_id, grain, bucket_start, rule_name) DO UPDATE SET total_calls = t.total_calls + excluded.total_calls,
      denied_calls = t.denied_calls + excluded.denied_calls, dry_run_calls = t.dry_run_calls + excluded.dry_run_calls`,
};

const column = <T, K extends keyof T>(rows: readonly T[], key: K): Array<T[K]> => rows.map((r) => r[key]);

/** Claims request ids first: the rows whose id was new are the ones to store, in batch order. */
async function claimRequestIds(client: pg.PoolClient, orgId: string, rows: readonly EventRow[]): Promise<EventRow[]> {
  const firstById = new Map<string, EventRow>();
  for (const r of rows) if (!firstById.has(r.request_id)) firstById.set(r.request_id, r);
  // Sorted, so two batches sharing ids wait on each other in one order instead of deadlocking.
  const ids = [...firstById.keys()].sort();
  const claimed = await client.query<{ request_id: string }>({
    name: 'telemetry_claim_ids', text: statements.claimIds,
    values: [orgId, ids, ids.map((id) => firstById.get(id)?.ts)],
  });
  const fresh = new Set(claimed.rows.map((r) => r.request_id));
  return rows.filter((r) => fresh.has(r.request_id) && firstById.get(r.request_id) === r);
}

async function insertEvents(client: pg.PoolClient, orgId: string, rows: readonly EventRow[]): Promise<void> {
  await client.query({
    name: 'telemetry_insert_events', text: statements.insertEvents,
    values: [orgId, column(rows, 'ts'), column(rows, 'request_id'), column(rows, 'agent_id'), column(rows, 'method'),
      column(rows, 'url_host'), column(rows, 'url_path'), column(rows, 'status_code'), column(rows, 'latency_ms'),
      column(rows, 'policy_result'), column(rows, 'deny_reason'), column(rows, 'trace_id'), column(rows, 'span_id'),
      column(rows, 'gen_ai'), column(rows, 'received_at')],
  });
}

async function upsertRollups(client: pg.PoolClient, orgId: string, rows: readonly EventRow[]): Promise<void> {
  const { agents, hosts, rules } = foldBatch(rows);
  await client.query({
    name: 'telemetry_upsert_agents', text: statements.upsertAgents,
    values: [orgId, column(agents, 'grain'), column(agents, 'bucket_start'), column(agents, 'agent_id'), column(agents, 'total_calls'),
      column(agents, 'allowed_calls'), column(agents, 'denied_calls'), column(agents, 'error_calls'), column(agents, 'latency_count'),
      column(agents, 'latency_sum'), column(agents, 'latency_hist')],
  });
  await client.query({
    name: 'telemetry_upsert_hosts', text: statements.upsertHosts,
    values: [orgId, column(hosts, 'grain'), column(hosts, 'bucket_start'), column(hosts, 'url_host'), column(hosts, 'total_calls'),
      column(hosts, 'allowed_calls'), column(hosts, 'denied_calls'), column(hosts, 'error_calls')],
  });
  if (rules.length === 0) return;
  await client.query({
    name: 'telemetry_upsert_rules', text: statements.upsertRules,
    values: [orgId, column(rules, 'grain'), column(rules, 'bucket_start'), column(rules, 'rule_name'), column(rules, 'total_calls'),
      column(rules, 'denied_calls'), column(rules, 'dry_run_calls')],
  });
}

/**
 * PostgreSQL's writer: one transaction on one pooled connection: claim request ids, insert the
 * fresh events, fold them into the rollups (hot rows last, so their locks are held briefly).
 */
export function createPostgresTelemetryWriter(pool: pg.Pool, partitions: PartitionManager): TelemetryWriter {
  return {
    async write(rows) {
      const orgId = rows[0]?.org_id;
      if (orgId === undefined) return [];
      await partitions.ensureFor(rows.map((r) => r.ts));
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const fresh = await claimRequestIds(client, orgId, rows);
        if (fresh.length > 0) {
          await insertEvents(client, orgId, fresh);
          await upsertRollups(client, orgId, fresh);
        }
        await client.query('COMMIT');
        return fresh;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
  };
}
