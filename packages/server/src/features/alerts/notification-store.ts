import { sql, type Kysely, type Transaction, type Updateable } from 'kysely';
import type { Store } from '../../db/database.js';
import type { AlertNotificationAttemptTable, AlertNotificationTable, Database } from '../../db/schema.js';

export type NotificationRow = AlertNotificationTable;
export type AttemptRow = AlertNotificationAttemptTable;
type Conn = Transaction<Database> | Kysely<Database>;

/** The outbox (undelivered rows, status `retrying`) and every attempt made on it. */
export function createNotificationStore({ kysely: k, dialect }: Store) {
  return {
    /** How many notifications wait for delivery, across every organization (the outbox depth metric). */
    async depth(): Promise<number> {
      const row = await k
        .selectFrom('alert_notifications')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('status', '=', sql.lit('retrying'))
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    async insert(trx: Conn, row: NotificationRow): Promise<void> {
      await trx.insertInto('alert_notifications').values(row).execute();
    },

    /**
     * Claims due rows for `claimId` until `leaseUntil`: rows another dispatcher holds are
     * skipped (SKIP LOCKED on PostgreSQL, one writer on SQLite), and a claim whose dispatcher
     * died lapses at its lease, so the row is taken up again.
     */
    async claimDue(now: number, leaseUntil: number, claimId: string, limit: number): Promise<NotificationRow[]> {
      const due = k
        .selectFrom('alert_notifications')
        .select(['org_id', 'id'])
        .where('status', '=', sql.lit('retrying'))
        .where('next_attempt_at', '<=', now)
        .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]))
        .orderBy('next_attempt_at')
        .limit(limit);
      return k
        .updateTable('alert_notifications')
        .set({ claim_id: claimId, claimed_until: leaseUntil })
        .where((eb) => eb(eb.refTuple('org_id', 'id'), 'in', (dialect.hasRowLocks ? due.forUpdate().skipLocked() : due).$asTuple('org_id', 'id')))
        .returningAll()
        .execute();
    },

    /** Records an attempt's outcome if the claim is still ours; answers whether it was. */
    async finish(trx: Conn, orgId: string, id: string, claimId: string, changes: Updateable<AlertNotificationTable>): Promise<boolean> {
      const r = await trx
        .updateTable('alert_notifications')
        .set({ ...changes, claim_id: null, claimed_until: null })
        .where('org_id', '=', orgId)
        .where('id', '=', id)
        .where('claim_id', '=', claimId)
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },

    async insertAttempt(trx: Conn, row: AttemptRow): Promise<void> {
      await trx.insertInto('alert_notification_attempts').values(row).execute();
    },

    async list(orgId: string, alertId: string, limit: number, before: string | undefined): Promise<NotificationRow[]> {
      let q = k.selectFrom('alert_notifications').selectAll().where('org_id', '=', orgId).where('alert_id', '=', alertId);
      if (before) q = q.where('id', '<', before);
      return q.orderBy('id', 'desc').limit(limit + 1).execute();
    },

    async attemptsOf(orgId: string, notificationIds: readonly string[]): Promise<AttemptRow[]> {
      if (notificationIds.length === 0) return [];
      return k
        .selectFrom('alert_notification_attempts')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('notification_id', 'in', notificationIds)
        .orderBy('notification_id')
        .orderBy('attempt')
        .execute();
    },
  };
}
export type NotificationStore = ReturnType<typeof createNotificationStore>;
