import { sql, type Kysely, type Transaction, type Updateable } from 'kysely';
import type { Store } from '../../db/database.js';
import type { AlertHistoryTable, AlertRuleTable, Database } from '../../db/schema.js';

export type AlertRuleRow = AlertRuleTable;
export type AlertHistoryRow = AlertHistoryTable;
/** A rule with what it shows of its agent. The agent's row is read here, narrowly, as the dashboard does. */
export type AlertRuleView = AlertRuleRow & { agent_name: string; agent_deleted_at: number | null };
export interface RuleKey {
  org_id: string;
  id: string;
}
type Conn = Transaction<Database> | Kysely<Database>;

/** Rules and their history, on both engines. */
export function createAlertStore({ kysely: k, dialect }: Store) {
  const withAgent = (conn: Conn) =>
    conn
      .selectFrom('alert_rules')
      .innerJoin('agents', (j) => j.onRef('agents.org_id', '=', 'alert_rules.org_id').onRef('agents.id', '=', 'alert_rules.agent_id'))
      .selectAll('alert_rules')
      .select(['agents.name as agent_name', 'agents.deleted_at as agent_deleted_at']);

  return {
    async insert(trx: Conn, row: AlertRuleRow): Promise<void> {
      await trx.insertInto('alert_rules').values(row).execute();
    },

    async get(orgId: string, id: string, conn: Conn = k): Promise<AlertRuleView | undefined> {
      return withAgent(conn).where('alert_rules.org_id', '=', orgId).where('alert_rules.id', '=', id).executeTakeFirst();
    },

    /** The rule, locked until the transaction ends where the engine has row locks (SQLite has one writer). */
    async getForUpdate(trx: Transaction<Database>, orgId: string, id: string): Promise<AlertRuleRow | undefined> {
      const q = trx.selectFrom('alert_rules').selectAll().where('org_id', '=', orgId).where('id', '=', id);
      return (dialect.hasRowLocks ? q.forUpdate() : q).executeTakeFirst();
    },

    async list(orgId: string, limit: number, before: string | undefined): Promise<AlertRuleView[]> {
      let q = withAgent(k).where('alert_rules.org_id', '=', orgId);
      if (before) q = q.where('alert_rules.id', '<', before);
      return q.orderBy('alert_rules.id', 'desc').limit(limit + 1).execute();
    },

    async update(trx: Conn, orgId: string, id: string, changes: Updateable<AlertRuleTable>): Promise<void> {
      await trx.updateTable('alert_rules').set(changes).where('org_id', '=', orgId).where('id', '=', id).execute();
    },

    /**
     * Records an evaluation that changed nothing, unless the rule changed since it was read (a
     * person edited its condition, disabled it, or its state moved): then the next minute judges it.
     */
    async recordReading(trx: Conn, rule: AlertRuleRow, value: number, at: number): Promise<void> {
      await trx
        .updateTable('alert_rules')
        .set({ last_value: value, last_evaluated_at: at })
        .where('org_id', '=', rule.org_id)
        .where('id', '=', rule.id)
        .where('is_enabled', '=', 1)
        .where('state', '=', rule.state)
        .where('agent_id', '=', rule.agent_id)
        .where('condition_type', '=', rule.condition_type)
        .where('threshold', '=', rule.threshold)
        .where('window_minutes', '=', rule.window_minutes)
        .execute();
    },

    async countDelivered(trx: Conn, orgId: string, id: string): Promise<void> {
      await trx
        .updateTable('alert_rules')
        .set((eb) => ({ notification_count: eb('notification_count', '+', 1) }))
        .where('org_id', '=', orgId)
        .where('id', '=', id)
        .execute();
    },

    /** The rule and everything recorded for it; the audit log keeps the deletion. */
    async delete(trx: Conn, orgId: string, id: string): Promise<void> {
      const notifications = trx.selectFrom('alert_notifications').select('id').where('org_id', '=', orgId).where('alert_id', '=', id);
      await trx.deleteFrom('alert_notification_attempts').where('org_id', '=', orgId).where('notification_id', 'in', notifications).execute();
      await trx.deleteFrom('alert_notifications').where('org_id', '=', orgId).where('alert_id', '=', id).execute();
      await trx.deleteFrom('alert_history').where('org_id', '=', orgId).where('alert_id', '=', id).execute();
      await trx.deleteFrom('alert_rules').where('org_id', '=', orgId).where('id', '=', id).execute();
    },

    /**
     * Claims up to `limit` enabled rules due at `slot` by moving their next slot on, in one
     * statement. On PostgreSQL the candidates are locked with SKIP LOCKED, so evaluators in
     * several processes each take different rules and none takes a rule twice for one slot.
     */
    async claimDue(slot: number, nextSlot: number, limit: number): Promise<RuleKey[]> {
      const due = k
        .selectFrom('alert_rules')
        .select(['org_id', 'id'])
        // Literals, not parameters: only then can both engines use the partial index.
        .where('is_enabled', '=', sql.lit(1))
        .where('next_eval_at', '<=', slot)
        .orderBy('next_eval_at')
        .limit(limit);
      return k
        .updateTable('alert_rules')
        .set({ next_eval_at: nextSlot })
        .where((eb) => eb(eb.refTuple('org_id', 'id'), 'in', (dialect.hasRowLocks ? due.forUpdate().skipLocked() : due).$asTuple('org_id', 'id')))
        .returning(['org_id', 'id'])
        .execute();
    },

    async views(keys: readonly RuleKey[]): Promise<AlertRuleView[]> {
      if (keys.length === 0) return [];
      return withAgent(k)
        .where((eb) => eb(eb.refTuple('alert_rules.org_id', 'alert_rules.id'), 'in', keys.map((key) => eb.tuple(key.org_id, key.id))))
        .execute();
    },

    async insertHistory(trx: Conn, row: AlertHistoryRow): Promise<void> {
      await trx.insertInto('alert_history').values(row).execute();
    },

    async listHistory(orgId: string, alertId: string, limit: number, before: string | undefined): Promise<AlertHistoryRow[]> {
      let q = k.selectFrom('alert_history').selectAll().where('org_id', '=', orgId).where('alert_id', '=', alertId);
      if (before) q = q.where('id', '<', before);
      return q.orderBy('id', 'desc').limit(limit + 1).execute();
    },
  };
}
export type AlertStore = ReturnType<typeof createAlertStore>;
