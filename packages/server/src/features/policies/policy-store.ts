import type { Kysely, Transaction } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database, PolicyVersionTable } from '../../db/schema.js';

export type PolicyVersionRow = PolicyVersionTable;
type Conn = Transaction<Database> | Kysely<Database>;

/** The agent columns this feature owns: which version is active and its mode. */
export interface AgentPolicyState {
  kill_switch_active: number;
  active_policy_version: number | null;
}

/**
 * Policy versions, and the agent row's active_policy_* columns, which this feature alone writes.
 * Reads of a soft-deleted agent find nothing, as everywhere else.
 */
export function createPolicyStore(db: Db) {
  const k = db.kysely;
  return {
    /**
     * The live agent's policy state; inside a transaction on PostgreSQL the row is locked, so
     * concurrent creations number their versions one after another.
     */
    async agentState(orgId: string, agentId: string, conn: Conn = k, lock = false): Promise<AgentPolicyState | undefined> {
      let q = conn
        .selectFrom('agents')
        .select(['kill_switch_active', 'active_policy_version'])
        .where('org_id', '=', orgId)
        .where('id', '=', agentId)
        .where('deleted_at', 'is', null);
      if (lock && db.dialect.hasRowLocks) q = q.forUpdate();
      return q.executeTakeFirst();
    },

    async latestVersion(trx: Conn, orgId: string, agentId: string): Promise<number> {
      const row = await trx
        .selectFrom('policy_versions')
        .select((eb) => eb.fn.max('version').as('v'))
        .where('org_id', '=', orgId)
        .where('agent_id', '=', agentId)
        .executeTakeFirst();
      return Number(row?.v ?? 0);
    },

    async insert(trx: Conn, row: PolicyVersionRow): Promise<void> {
      await trx.insertInto('policy_versions').values(row).execute();
    },

    async get(orgId: string, agentId: string, version: number, conn: Conn = k): Promise<PolicyVersionRow | undefined> {
      return conn
        .selectFrom('policy_versions')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('agent_id', '=', agentId)
        .where('version', '=', version)
        .executeTakeFirst();
    },

    /** Newest first, by version; `before` is the last version of the previous page. */
    async list(orgId: string, agentId: string, limit: number, before: number | undefined): Promise<PolicyVersionRow[]> {
      let q = k.selectFrom('policy_versions').selectAll().where('org_id', '=', orgId).where('agent_id', '=', agentId);
      if (before !== undefined) q = q.where('version', '<', before);
      return q.orderBy('version', 'desc').limit(limit + 1).execute();
    },

    async activate(trx: Conn, orgId: string, agentId: string, version: number, mode: string, now: number): Promise<void> {
      await trx
        .updateTable('agents')
        .set({ active_policy_version: version, active_policy_mode: mode, updated_at: now })
        .where('org_id', '=', orgId)
        .where('id', '=', agentId)
        .where('deleted_at', 'is', null)
        .execute();
      await trx
        .updateTable('policy_versions')
        .set({ activated_at: now })
        .where('org_id', '=', orgId)
        .where('agent_id', '=', agentId)
        .where('version', '=', version)
        .execute();
    },

    /** What the control plane sends: kill switch and the active version, read together. */
    async controlState(orgId: string, agentId: string): Promise<{ killSwitchActive: boolean; active: PolicyVersionRow | undefined } | undefined> {
      const row = await k
        .selectFrom('agents as a')
        .leftJoin('policy_versions as p', (join) =>
          join.onRef('p.org_id', '=', 'a.org_id').onRef('p.agent_id', '=', 'a.id').onRef('p.version', '=', 'a.active_policy_version'))
        .select([
          'a.kill_switch_active', 'p.org_id', 'p.agent_id', 'p.version', 'p.id', 'p.hash', 'p.mode', 'p.description',
          'p.document', 'p.created_by', 'p.created_at', 'p.activated_at',
        ])
        .where('a.org_id', '=', orgId)
        .where('a.id', '=', agentId)
        .where('a.deleted_at', 'is', null)
        .executeTakeFirst();
      if (!row) return undefined;
      const { kill_switch_active, ...p } = row;
      const active = p.version === null || p.version === undefined ? undefined : (p as PolicyVersionRow);
      return { killSwitchActive: kill_switch_active === 1, active };
    },
  };
}
export type PolicyStore = ReturnType<typeof createPolicyStore>;
