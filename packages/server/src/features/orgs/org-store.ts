import type { Plan } from '@corral/contracts';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Store } from '../../db/database.js';

export interface Organization {
  orgId: string;
  plan: Plan;
  createdAt: number;
}

/** Reads and writes take an optional executor: a transaction (`trx`) when they are part of one. */
export function createOrgStore(db: Store) {
  const k = db.kysely;
  return {
    /** Creates the organization if it does not exist yet; never changes an existing one. */
    async ensure(orgId: string, plan: Plan, now: number, executor: Kysely<Database> = k): Promise<void> {
      await executor
        .insertInto('organizations')
        .values({ org_id: orgId, plan, created_at: now, updated_at: now })
        .onConflict((oc) => oc.column('org_id').doNothing())
        .execute();
    },

    async get(orgId: string, executor: Kysely<Database> = k): Promise<Organization | undefined> {
      const row = await executor.selectFrom('organizations').selectAll().where('org_id', '=', orgId).executeTakeFirst();
      return row && { orgId: row.org_id, plan: row.plan as Plan, createdAt: row.created_at };
    },

    async setPlan(orgId: string, plan: Plan, now: number, executor: Kysely<Database> = k): Promise<boolean> {
      const result = await executor.updateTable('organizations').set({ plan, updated_at: now }).where('org_id', '=', orgId).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /**
     * Serializes plan-limited creations within one organization: PostgreSQL locks the org row
     * for the transaction; SQLite already runs one writer at a time.
     */
    async lockForUpdate(trx: Transaction<Database> | Kysely<Database>, orgId: string): Promise<Plan> {
      let query = trx.selectFrom('organizations').select('plan').where('org_id', '=', orgId);
      if (db.dialect.hasRowLocks) query = query.forUpdate();
      const row = await query.executeTakeFirst();
      return (row?.plan as Plan | undefined) ?? 'free';
    },
  };
}
export type OrgStore = ReturnType<typeof createOrgStore>;
