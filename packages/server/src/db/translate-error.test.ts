import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb, testDialects } from '../../test/helpers/test-databases.js';
import { ConflictError, UnavailableError } from '../errors.js';
import { createDatabase } from './database.js';

describe.each(testDialects)('driver errors at the store edge on %s', (dialect) => {
  let testDb: TestDb;
  beforeAll(async () => {
    testDb = await createTestDb(dialect);
  });
  afterAll(() => testDb.close());

  it('turns a unique violation into a 409 conflict, inside a transaction too', async () => {
    const orgId = randomUUID();
    const row = { org_id: orgId, plan: 'free', created_at: 1, updated_at: 1 };
    await testDb.db.kysely.insertInto('organizations').values(row).execute();
    const again = testDb.db.kysely.insertInto('organizations').values(row).execute();
    await expect(again).rejects.toBeInstanceOf(ConflictError);
    const inTransaction = testDb.db.kysely.transaction().execute((trx) => trx.insertInto('organizations').values(row).execute());
    await expect(inTransaction).rejects.toMatchObject({ status: 409, code: 'conflict' });
  });
});

describe('an unreachable PostgreSQL', () => {
  it('is a 503 service_unavailable with Retry-After, not a driver error', async () => {
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    const db = createDatabase({ databaseUrl: 'postgres://corral@127.0.0.1:1/corral', poolSize: 1 });
    try {
      const query = db.kysely.selectFrom('organizations').selectAll().execute();
      await expect(query).rejects.toBeInstanceOf(UnavailableError);
      await expect(db.kysely.selectFrom('organizations').selectAll().execute()).rejects.toMatchObject({
        status: 503, code: 'service_unavailable', headers: { 'retry-after': '5' },
      });
    } finally {
      await db.close();
    }
  });
});
