import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';
import { migrateToLatest } from './db/migrate.js';
import { setOrganizationPlan } from './operator-tasks.js';
import { openDatabase } from './service.js';

describe('setOrganizationPlan', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('changes the plan and writes its audit record together, or neither', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'corral-plan-'));
    dirs.push(dir);
    const config = loadConfig({ DATA_DIR: dir, CORRAL_JWT_SECRET: 'operator-task-test-secret-long-enough-0123456789' });
    const orgId = randomUUID();
    expect(await setOrganizationPlan(config, orgId, 'team')).toEqual({ orgId, plan: 'team', previousPlan: null });

    const db = openDatabase(config);
    await migrateToLatest(db);
    const planOf = async () => (await db.kysely.selectFrom('organizations').select('plan').where('org_id', '=', orgId).executeTakeFirstOrThrow()).plan;
    const auditCount = async () => Number((await sql<{ n: number }>`SELECT count(*) AS n FROM audit_log WHERE org_id = ${orgId}`.execute(db.kysely)).rows[0]?.n);
    try {
      expect(await auditCount()).toBe(1);
      // With the audit log unwritable, the change must not happen either.
      await sql`ALTER TABLE audit_log RENAME TO audit_log_away`.execute(db.kysely);
      await expect(setOrganizationPlan(config, orgId, 'enterprise')).rejects.toThrow(/audit_log/);
      await sql`ALTER TABLE audit_log_away RENAME TO audit_log`.execute(db.kysely);
      expect(await planOf()).toBe('team');
      expect(await auditCount()).toBe(1);
      expect(await setOrganizationPlan(config, orgId, 'enterprise')).toEqual({ orgId, plan: 'enterprise', previousPlan: 'team' });
      expect(await planOf()).toBe('enterprise');
      expect(await auditCount()).toBe(2);
    } finally {
      await db.close();
    }
  });
});
