import { sql } from 'kysely';
import type { Store } from '../../db/database.js';
import { ROLLUP_GRAINS } from '../../db/schema.js';

const CHUNK = 5000;
const rollupTables = ['telemetry_rollups', 'telemetry_host_rollups', 'telemetry_rule_rollups', 'telemetry_model_rollups'] as const;

const yieldToOthers = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Deletes in chunks, so writers get turns between them. */
async function deleteInChunks(run: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await run();
    total += n;
    if (n < CHUNK) return total;
    await yieldToOthers();
  }
}

/** The deletes retention makes on both engines. */
export function createRetentionStore({ kysely: k }: Store) {
  return {
    async orgIds(): Promise<string[]> {
      return (await k.selectFrom('organizations').select('org_id').execute()).map((r) => r.org_id);
    },

    /** Raw events in the one unpartitioned table (SQLite), by the (org_id, ts) index. */
    async deleteEventsBefore(orgId: string, cutoff: number): Promise<number> {
      return deleteInChunks(async () => {
        const r = await sql`DELETE FROM telemetry_events WHERE rowid IN (
          SELECT rowid FROM telemetry_events WHERE org_id = ${orgId} AND ts < ${cutoff} LIMIT ${CHUNK})`.execute(k);
        return Number(r.numAffectedRows ?? 0);
      });
    },

    /** PostgreSQL's request-id claims outlive no event: the BRIN index finds the old ones. */
    async deleteRequestIdsBefore(cutoff: number): Promise<number> {
      return deleteInChunks(async () => {
        const r = await sql`DELETE FROM telemetry_request_ids WHERE ctid IN (
          SELECT ctid FROM telemetry_request_ids WHERE ts < ${cutoff} LIMIT ${CHUNK})`.execute(k);
        return Number(r.numAffectedRows ?? 0);
      });
    },

    /** Rollup buckets that end at or before the cutoff, every grain and table. */
    async deleteRollupsBefore(orgId: string, cutoff: number): Promise<number> {
      let total = 0;
      for (const table of rollupTables) {
        for (const grain of ROLLUP_GRAINS) {
          const r = await k.deleteFrom(table).where('org_id', '=', orgId).where('grain', '=', grain).where('bucket_start', '<=', cutoff - grain).executeTakeFirst();
          total += Number(r.numDeletedRows);
        }
      }
      return total;
    },

    /** SDK instances that stopped reporting before `before` (processes long gone) leave the list. */
    async deleteIdleInstances(before: number): Promise<number> {
      const r = await k.deleteFrom('agent_instances').where('last_seen_at', '<', before).executeTakeFirst();
      return Number(r.numDeletedRows);
    },

    /** Rate-limit rows whose state is long past carry no information. */
    async deleteIdleRateLimits(before: number): Promise<void> {
      await k.deleteFrom('rate_limit_state').where('tat', '<', before).execute();
    },
  };
}
export type RetentionStore = ReturnType<typeof createRetentionStore>;
