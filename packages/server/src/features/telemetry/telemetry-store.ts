import type { Store } from '../../db/database.js';

/** The reads the ingest hot path makes outside the writer's transaction. */
export function createTelemetryStore({ kysely }: Store) {
  return {
    /** Public keys (null when none) of the given agents that are live in the organization: one query per batch. */
    async liveAgentKeys(orgId: string, agentIds: readonly string[]): Promise<Map<string, string | null>> {
      const rows = await kysely
        .selectFrom('agents')
        .select(['id', 'public_key'])
        .where('org_id', '=', orgId)
        .where('id', 'in', agentIds)
        .where('deleted_at', 'is', null)
        .execute();
      return new Map(rows.map((r) => [r.id, r.public_key]));
    },
  };
}
export type TelemetryStore = ReturnType<typeof createTelemetryStore>;
