import type { Db } from '../../db/database.js';
import { createPartitionManager, type PartitionManager } from './event-partitions.js';
import type { EventRow } from './rollup-fold.js';
import { createPostgresTelemetryWriter } from './telemetry-postgres-writer.js';
import { createSqliteTelemetryWriter } from './telemetry-sqlite-writer.js';

/**
 * Stores one organization's batch in one transaction: events whose request_id the organization
 * has not stored before are inserted and folded into the rollups; the rest are skipped.
 * Answers the events it stored.
 */
export interface TelemetryWriter {
  write(rows: readonly EventRow[]): Promise<EventRow[]>;
}

export interface TelemetryStore extends TelemetryWriter {
  /** PostgreSQL's day partitions of raw events; undefined on SQLite. */
  readonly partitions: PartitionManager | undefined;
  /** Public keys (null when none) of the given agents that are live in the organization. */
  liveAgentKeys(orgId: string, agentIds: readonly string[]): Promise<Map<string, string | null>>;
}

/**
 * The ingest hot path bypasses the query builder: on each engine the fastest bulk path is
 * different (prepared statements on SQLite, unnest arrays on PostgreSQL), and building a
 * 15,000-parameter statement per batch would cost more than storing it.
 */
export function createTelemetryStore(db: Db): TelemetryStore {
  // One query for a batch's agents, on the hot path; a narrow read of the agents table.
  async function liveAgentKeys(orgId: string, agentIds: readonly string[]): Promise<Map<string, string | null>> {
    const rows = await db.kysely
      .selectFrom('agents')
      .select(['id', 'public_key'])
      .where('org_id', '=', orgId)
      .where('id', 'in', agentIds)
      .where('deleted_at', 'is', null)
      .execute();
    return new Map(rows.map((r) => [r.id, r.public_key]));
  }
  if (db.dialect.name === 'postgres') {
    if (!db.pgPool) throw new Error('PostgreSQL store without a pool');
    const partitions = createPartitionManager(db.pgPool);
    return { partitions, liveAgentKeys, ...createPostgresTelemetryWriter(db.pgPool, partitions) };
  }
  return { partitions: undefined, liveAgentKeys, ...createSqliteTelemetryWriter(db) };
}
