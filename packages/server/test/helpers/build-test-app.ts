import type { ApiKeyScope, Role } from '@corral/contracts';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { randomUUID } from 'node:crypto';
import { buildApiApp, buildIngestApp } from '../../src/app.js';
import { createContainer, type Container } from '../../src/container.js';
import type { DialectName } from '../../src/db/dialect/types.js';
import { signJwt, type JwtSettings } from '../../src/features/auth/index.js';
import { createHttpMetrics } from '../../src/http/metrics.js';
import type { Clock } from '../../src/lib/clock.js';
import { collectRoutes, listRoutes, type CollectedRoute, type RouteInfo } from './route-catalog.js';
import { createTestDb, dialectOf, type TestDb, type TestStoreKind } from './test-databases.js';

export const TEST_JWT_SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';

/** A clock tests can move. Starts at the real time so JWT `exp` checks behave. */
export function createTestClock(start = Date.now()): Clock & { set(ms: number): void; advance(ms: number): void } {
  let now = start;
  return { now: () => now, set: (ms) => void (now = ms), advance: (ms) => void (now += ms) };
}

export interface TestContext {
  dialect: DialectName;
  testDb: TestDb;
  container: Container;
  api: FastifyInstance;
  ingest: FastifyInstance;
  clock: ReturnType<typeof createTestClock>;
  /** Every route each host serves, found at run time (see route-catalog.ts). */
  routes: { api: RouteInfo[]; ingest: RouteInfo[] };
  /** A JWT for an organization (a new one unless given) and role. */
  token(opts?: { orgId?: string; role?: Role; subject?: string }): Promise<string>;
  /** A fresh organization with an owner token. */
  newOrg(): Promise<{ orgId: string; token: string }>;
  /** Creates an API key through the API and returns the full key. */
  createKey(ownerToken: string, scope?: ApiKeyScope): Promise<{ id: string; key: string }>;
  /** `app.inject` on the API host with a JSON body and bearer token or API key. */
  request(opts: InjectOptions & { token?: string; apiKey?: string; host?: 'api' | 'ingest' }): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export async function buildTestContext(
  kind: TestStoreKind,
  opts: { plan?: 'free' | 'team' | 'enterprise'; jwt?: Partial<JwtSettings> } = {},
): Promise<TestContext> {
  const dialect = dialectOf(kind);
  const testDb = await createTestDb(kind);
  const clock = createTestClock();
  const container = await createContainer({
    db: testDb.db,
    clock,
    defaultPlan: opts.plan ?? 'enterprise',
    jwt: { secret: TEST_JWT_SECRET, ...opts.jwt },
  });
  const collected = { api: [] as CollectedRoute[], ingest: [] as CollectedRoute[] };
  const observed = {
    ...container,
    apiRoutes: [collectRoutes(collected.api), ...container.apiRoutes],
    ingestRoutes: [collectRoutes(collected.ingest), ...container.ingestRoutes],
  };
  const appOptions = { container: observed, metrics: createHttpMetrics(), logger: false, bodyLimitBytes: 5 * 1024 * 1024 };
  const api = await buildApiApp(appOptions);
  const ingest = await buildIngestApp(appOptions);
  await api.ready();
  await ingest.ready();

  const token: TestContext['token'] = (o = {}) =>
    signJwt(TEST_JWT_SECRET, { orgId: o.orgId ?? randomUUID(), role: o.role ?? 'owner', subject: o.subject ?? 'user-1' }, 3600);

  const request: TestContext['request'] = ({ token: bearer, apiKey, host = 'api', headers, ...rest }) =>
    (host === 'api' ? api : ingest).inject({
      ...rest,
      headers: {
        ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
        ...(apiKey ? { 'x-api-key': apiKey } : {}),
        ...headers,
      },
    });

  return {
    dialect,
    testDb,
    container,
    api,
    ingest,
    clock,
    routes: { api: listRoutes(api, 'api', collected.api), ingest: listRoutes(ingest, 'ingest', collected.ingest) },
    token,
    request,
    async newOrg() {
      const orgId = randomUUID();
      return { orgId, token: await token({ orgId }) };
    },
    async createKey(ownerToken, scope = { kind: 'all' }) {
      const res = await request({ method: 'POST', url: '/v1/keys', token: ownerToken, payload: { name: 'test key', scope } });
      if (res.statusCode !== 200) throw new Error(`createKey failed: ${res.statusCode} ${res.body}`);
      const body = res.json<{ id: string; key: string }>();
      return { id: body.id, key: body.key };
    },
    async close() {
      await api.close();
      await ingest.close();
      for (const worker of [...container.workers].reverse()) await worker.stop();
      await testDb.close();
    },
  };
}
