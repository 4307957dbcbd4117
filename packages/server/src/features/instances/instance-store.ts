import type { Store } from '../../db/database.js';
import type { AgentInstanceTable } from '../../db/schema.js';

export type InstanceRow = AgentInstanceTable;

/** Every query is scoped by organization and agent. */
export function createInstanceStore({ kysely: k }: Store) {
  return {
    /** Inserts the instance on its first report; later reports replace its state and keep its id. */
    async upsert(row: InstanceRow): Promise<InstanceRow> {
      const { org_id: _o, agent_id: _a, instance_id: _i, id: _id, ...state } = row;
      await k
        .insertInto('agent_instances')
        .values(row)
        .onConflict((oc) => oc.columns(['org_id', 'agent_id', 'instance_id']).doUpdateSet(state))
        .execute();
      return k
        .selectFrom('agent_instances')
        .selectAll()
        .where('org_id', '=', row.org_id)
        .where('agent_id', '=', row.agent_id)
        .where('instance_id', '=', row.instance_id)
        .executeTakeFirstOrThrow();
    },

    /** Newest first by first report (`id`, UUIDv7), so paging is stable while instances report. */
    async list(orgId: string, agentId: string, limit: number, before: string | undefined): Promise<InstanceRow[]> {
      let q = k.selectFrom('agent_instances').selectAll().where('org_id', '=', orgId).where('agent_id', '=', agentId);
      if (before) q = q.where('id', '<', before);
      return q.orderBy('id', 'desc').limit(limit + 1).execute();
    },
  };
}
export type InstanceStore = ReturnType<typeof createInstanceStore>;
