import type { Plan } from '@corral/contracts';
import type { Config } from './config.js';
import type { Db } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { createAuditStore } from './features/audit/index.js';
import { createOrgStore } from './features/orgs/index.js';
import { systemClock } from './lib/clock.js';
import { openDatabase } from './service.js';

/** Operator tasks run against the store directly, with no server: `corral migrate`, `corral org set-plan`. */

export interface MigrationOutcome {
  readonly store: 'sqlite' | 'postgres';
  /** Migrations applied by this run, in order; empty when the store was already current. */
  readonly applied: string[];
}

async function withDatabase<T>(config: Config, task: (db: Db) => Promise<T>): Promise<T> {
  const db = openDatabase(config);
  try {
    return await task(db);
  } finally {
    await db.close();
  }
}

export function migrateStore(config: Config): Promise<MigrationOutcome> {
  return withDatabase(config, async (db) => {
    const result = await migrateToLatest(db);
    const applied = (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    return { store: db.dialect.name, applied };
  });
}

export interface PlanChange {
  readonly orgId: string;
  readonly plan: Plan;
  /** null when the organization did not exist and was created with this plan. */
  readonly previousPlan: Plan | null;
}

/**
 * Sets an organization's plan, creating the organization if it has not been seen yet, so an
 * operator can size an organization before its first request. The store is migrated first,
 * as on start, so this works on a fresh DATA_DIR. A real change is audited as a system action.
 */
export function setOrganizationPlan(config: Config, orgId: string, plan: Plan): Promise<PlanChange> {
  return withDatabase(config, async (db) => {
    await migrateToLatest(db);
    const orgStore = createOrgStore(db);
    const auditStore = createAuditStore(db);
    // One transaction: the plan never changes without its audit record, nor the other way round.
    return db.kysely.transaction().execute(async (trx) => {
      const now = systemClock.now();
      const previousPlan = (await orgStore.get(orgId, trx))?.plan ?? null;
      await orgStore.ensure(orgId, plan, now, trx);
      await orgStore.setPlan(orgId, plan, now, trx);
      if (previousPlan !== plan) {
        await auditStore.record(trx, {
          orgId,
          actor: { type: 'system', id: 'system' },
          action: 'organization.set_plan',
          targetType: 'organization',
          targetId: orgId,
          details: { plan, previous_plan: previousPlan, via: 'corral org set-plan' },
          at: now,
        });
      }
      return { orgId, plan, previousPlan };
    });
  });
}
