import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestClock } from '../../../test/helpers/build-test-app.js';
import { createTestDb, type TestDb, testDialects } from '../../../test/helpers/test-databases.js';
import { createAuditStore } from '../audit/index.js';
import { createOrgStore } from '../orgs/index.js';
import { createApiKeyService } from './api-key-service.js';
import { createApiKeyStore } from './api-key-store.js';

describe.each(testDialects)('API key authentication on %s', (dialect) => {
  let testDb: TestDb;
  const clock = createTestClock();
  const orgId = '0190a1b2-0000-7000-8000-00000000c0de';
  const actor = { type: 'user' as const, id: 'owner' };
  let writes: Array<{ id: string; at: number }>;
  let service: ReturnType<typeof createApiKeyService>;

  beforeAll(async () => {
    testDb = await createTestDb(dialect);
    const store = createApiKeyStore(testDb.db);
    // The real store, with its last_used_at writes counted on their way through.
    const countingStore = {
      ...store,
      touch: (org: string, id: string, at: number) => {
        writes.push({ id, at });
        return store.touch(org, id, at);
      },
    };
    const orgStore = createOrgStore(testDb.db);
    await orgStore.ensure(orgId, 'enterprise', clock.now());
    service = createApiKeyService({ db: testDb.db, apiKeyStore: countingStore, orgStore, auditStore: createAuditStore(testDb.db), clock });
  });
  afterAll(() => testDb.close());

  it('writes last_used_at once per minute per key, not once per request', async () => {
    writes = [];
    const a = await service.create(orgId, actor, { name: 'a', scope: { kind: 'all' } });
    const b = await service.create(orgId, actor, { name: 'b', scope: { kind: 'read_only' } });
    const start = clock.now();
    for (let i = 0; i < 50; i++) {
      await service.authenticate(a.key);
      await service.authenticate(b.key);
      clock.advance(1000);
    }
    // 50 seconds of traffic on two keys: one write each.
    expect(writes).toEqual([{ id: a.id, at: start }, { id: b.id, at: start }]);
    clock.advance(10_000);
    await service.authenticate(a.key);
    expect(writes).toHaveLength(3);
    expect(writes[2]).toEqual({ id: a.id, at: start + 60_000 });
  });

  it('authenticates to a principal carrying the organization, key id and scope', async () => {
    const created = await service.create(orgId, actor, { name: 'p', scope: { kind: 'restricted', resources: { events: 'write' } } });
    expect(await service.authenticate(created.key)).toEqual({
      kind: 'api_key', orgId, keyId: created.id, scope: { kind: 'restricted', resources: { events: 'write' } },
    });
  });

  it('finds a key by its indexed prefix and refuses one whose secret differs', async () => {
    const created = await service.create(orgId, actor, { name: 'q', scope: { kind: 'all' } });
    const sameprefix = `${created.key_prefix}${'Z'.repeat(created.key.length - created.key_prefix.length)}`;
    await expect(service.authenticate(sameprefix)).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    const indexes = dialect === 'sqlite'
      ? await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'api_keys'`.execute(testDb.db.kysely)
      : await sql<{ name: string }>`SELECT indexname AS name FROM pg_indexes WHERE tablename = 'api_keys' AND schemaname = current_schema()`.execute(testDb.db.kysely);
    expect(indexes.rows.map((r) => r.name)).toContain('api_keys_prefix_idx');
  });
});
