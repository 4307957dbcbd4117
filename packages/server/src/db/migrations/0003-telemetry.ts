import { sql, type Kysely, type Migration } from 'kysely';
import type { DialectName } from '../dialect/types.js';
import { columnTypes } from './column-types.js';

/**
 * Raw telemetry events, their per-minute/hour/day rollups and the shared rate-limit state.
 * See docs/telemetry.md for the design. PostgreSQL partitions raw events by day (partitions are
 * created ahead and on demand by the telemetry feature), so retention drops whole tables; a
 * partitioned table cannot hold a unique index without the partition key, so request_id
 * uniqueness lives in its own table there. SQLite keeps one table with a unique index.
 */
export const telemetry = (dialect: DialectName): Migration => {
  const t = columnTypes(dialect);
  const count = 'bigint' as const;
  return {
    async up(db: Kysely<unknown>) {
      if (dialect === 'postgres') await createPostgresEvents(db);
      else await createSqliteEvents(db, t.uuid);
      await db.schema.createIndex('telemetry_events_agent_idx').on('telemetry_events').columns(['org_id', 'agent_id', 'ts']).execute();
      // Only OTLP events carry a trace id; a partial index costs the SDK path nothing.
      await db.schema
        .createIndex('telemetry_events_trace_idx')
        .on('telemetry_events')
        .columns(['org_id', 'trace_id'])
        .where(sql.ref('trace_id'), 'is not', null)
        .execute();

      // grain is the bucket width in ms (minute, hour, day); agent_id is the nil UUID for the
      // organization's total, so the common questions read one row per bucket.
      await db.schema
        .createTable('telemetry_rollups')
        .addColumn('org_id', t.uuid, (c) => c.notNull())
        .addColumn('grain', 'integer', (c) => c.notNull())
        .addColumn('bucket_start', t.time, (c) => c.notNull())
        .addColumn('agent_id', t.uuid, (c) => c.notNull())
        .addColumn('total_calls', count, (c) => c.notNull())
        .addColumn('allowed_calls', count, (c) => c.notNull())
        .addColumn('denied_calls', count, (c) => c.notNull())
        .addColumn('error_calls', count, (c) => c.notNull())
        .addColumn('latency_count', count, (c) => c.notNull())
        .addColumn('latency_sum', count, (c) => c.notNull())
        .addColumn('latency_hist', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('telemetry_rollups_pk', ['org_id', 'grain', 'bucket_start', 'agent_id'])
        .execute();

      await db.schema
        .createTable('telemetry_host_rollups')
        .addColumn('org_id', t.uuid, (c) => c.notNull())
        .addColumn('grain', 'integer', (c) => c.notNull())
        .addColumn('bucket_start', t.time, (c) => c.notNull())
        .addColumn('url_host', 'text', (c) => c.notNull())
        .addColumn('total_calls', count, (c) => c.notNull())
        .addColumn('allowed_calls', count, (c) => c.notNull())
        .addColumn('denied_calls', count, (c) => c.notNull())
        .addColumn('error_calls', count, (c) => c.notNull())
        .addPrimaryKeyConstraint('telemetry_host_rollups_pk', ['org_id', 'grain', 'bucket_start', 'url_host'])
        .execute();

      await db.schema
        .createTable('telemetry_rule_rollups')
        .addColumn('org_id', t.uuid, (c) => c.notNull())
        .addColumn('grain', 'integer', (c) => c.notNull())
        .addColumn('bucket_start', t.time, (c) => c.notNull())
        .addColumn('rule_name', 'text', (c) => c.notNull())
        .addColumn('total_calls', count, (c) => c.notNull())
        .addColumn('denied_calls', count, (c) => c.notNull())
        .addColumn('dry_run_calls', count, (c) => c.notNull())
        .addPrimaryKeyConstraint('telemetry_rule_rollups_pk', ['org_id', 'grain', 'bucket_start', 'rule_name'])
        .execute();

      // GCRA state: the theoretical arrival time, in fractional epoch ms, per organization.
      await db.schema
        .createTable('rate_limit_state')
        .addColumn('org_id', t.uuid, (c) => c.primaryKey())
        .addColumn('tat', dialect === 'postgres' ? 'double precision' : 'real', (c) => c.notNull())
        .execute();
    },
  };
};

// Byte-order collation on PostgreSQL: cursors compare request_ids the same way on every install,
// and C comparisons are the cheapest for the indexes.
function eventColumns(uuid: string, collate = '') {
  return sql.raw(`
    org_id ${uuid} NOT NULL,
    ts BIGINT NOT NULL,
    request_id TEXT${collate} NOT NULL,
    agent_id ${uuid} NOT NULL,
    method TEXT NOT NULL,
    url_host TEXT NOT NULL,
    url_path TEXT NOT NULL,
    status_code INTEGER,
    latency_ms INTEGER,
    policy_result TEXT NOT NULL,
    deny_reason TEXT,
    trace_id TEXT,
    span_id TEXT,
    gen_ai TEXT,
    received_at BIGINT NOT NULL,
    PRIMARY KEY (org_id, ts, request_id)`);
}

async function createSqliteEvents(db: Kysely<unknown>, uuid: string): Promise<void> {
  await sql`CREATE TABLE telemetry_events (${eventColumns(uuid)})`.execute(db);
  await db.schema.createIndex('telemetry_events_request_uq').unique().on('telemetry_events').columns(['org_id', 'request_id']).execute();
}

async function createPostgresEvents(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE telemetry_events (${eventColumns('uuid', ' COLLATE "C"')}) PARTITION BY RANGE (ts)`.execute(db);
  // Rows arrive roughly in time order, so a BRIN index makes retention's range delete cheap.
  await sql`
    CREATE TABLE telemetry_request_ids (
      org_id uuid NOT NULL,
      request_id TEXT COLLATE "C" NOT NULL,
      ts BIGINT NOT NULL,
      PRIMARY KEY (org_id, request_id)
    )`.execute(db);
  await sql`CREATE INDEX telemetry_request_ids_ts_brin ON telemetry_request_ids USING brin (ts)`.execute(db);
  // Rollup upserts merge histograms inside the row lock, so concurrent writers never lose counts.
  await sql`
    CREATE FUNCTION corral_hist_merge(a text, b text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
      SELECT COALESCE(jsonb_object_agg(k, s)::text, '{}') FROM (
        SELECT k, SUM(v::bigint) AS s
        FROM (SELECT * FROM jsonb_each_text(COALESCE(a, '{}')::jsonb)
              UNION ALL SELECT * FROM jsonb_each_text(COALESCE(b, '{}')::jsonb)) AS e(k, v)
        GROUP BY k
      ) AS merged
    $$`.execute(db);
}
