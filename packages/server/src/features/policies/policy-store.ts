import type { Kysely, Transaction } from 'kysely';
import type { Store } from '../../db/database.js';
import type { Database, PolicyVersionTable } from '../../db/schema.js';

export type PolicyVersionRow = PolicyVersionTable;
type Conn = Transaction<Database> | Kysely<Database>;

/** The agent columns this feature owns: which version is active and its mode. */
export interface AgentPolicyState {
  kill_switch_active: number;
  active_policy_version: number | null;
  /** Counts the agent's activations; the active version's bundles carry it. */
  policy_sequence: number;
}

/** The active version with the sequence number of the activation that made it active. */
export type ActivePolicy = PolicyVersionRow & { sequence: number };

/** What the control plane sends: the kill switch and the active policy. */
export interface ControlStateRow {
  killSwitchActive: boolean;
  active: ActivePolicy | undefined;
}

/**
 * Policy versions, and the agent row's active_policy_* columns, which this feature alone writes.
 * Reads of a soft-deleted agent find nothing, as everywhere else.
 */
export function createPolicyStore(db: Store) {
  const k = db.kysely;
  return {
    /**
     * The live agent's policy state; inside a transaction on PostgreSQL the row is locked, so
     * concurrent creations number their versions one after another.
     */
    async agentState(orgId: string, agentId: string, conn: Conn = k, lock = false): Promise<AgentPolicyState | undefined> {
      let q = conn
        .selectFrom('agents')
        .select(['kill_switch_active', 'active_policy_version', 'policy_sequence'])
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

    /** Makes `version` the active one under the next activation sequence; answers that sequence. */
    async activate(trx: Conn, orgId: string, agentId: string, version: number, mode: string, now: number): Promise<number> {
      await trx
        .updateTable('agents')
        .set((eb) => ({ active_policy_version: version, active_policy_mode: mode, policy_sequence: eb('policy_sequence', '+', 1), updated_at: now }))
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
      const row = await trx
        .selectFrom('agents')
        .select('policy_sequence')
        .where('org_id', '=', orgId)
        .where('id', '=', agentId)
        .executeTakeFirstOrThrow();
      return row.policy_sequence;
    },

    /** What the control plane sends: kill switch and the active version, read together. */
    async controlState(orgId: string, agentId: string): Promise<ControlStateRow | undefined> {
      const row = await k
        .selectFrom('agents as a')
        .leftJoin('policy_versions as p', (join) =>
          join.onRef('p.org_id', '=', 'a.org_id').onRef('p.agent_id', '=', 'a.id').onRef('p.version', '=', 'a.active_policy_version'))
        .select([
          'a.kill_switch_active', 'a.policy_sequence', 'p.org_id', 'p.agent_id', 'p.version', 'p.id', 'p.hash', 'p.mode', 'p.description',
          'p.document', 'p.created_by', 'p.created_at', 'p.activated_at',
        ])
        .where('a.org_id', '=', orgId)
        .where('a.id', '=', agentId)
        .where('a.deleted_at', 'is', null)
        .executeTakeFirst();
      if (!row) return undefined;
      const { kill_switch_active, policy_sequence, ...p } = row;
      const active = p.version === null || p.version === undefined ? undefined : { ...(p as PolicyVersionRow), sequence: policy_sequence };
      return { killSwitchActive: kill_switch_active === 1, active };
    },
  };
}
export type PolicyStore = ReturnType<typeof createPolicyStore>;
