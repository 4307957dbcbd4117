import type { ApiKeyScope, Role } from '@corral/contracts';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { randomUUID } from 'node:crypto';
import { buildApiApp, buildIngestApp } from '../../src/app.js';
import { type Container, createContainer, type ContainerOptions, type RouteModule } from '../../src/container.js';
import type { Db } from '../../src/db/database.js';
import type { DialectName } from '../../src/db/dialect/types.js';
import { signJwt, type JwtSettings } from '../../src/features/auth/index.js';
import type { Clock } from '../../src/lib/clock.js';
import { stopWorkers } from '../../src/lib/lifecycle.js';
import { generateEncryptionKey } from '../../src/lib/secret-box.js';
import { createTestLogger, type TestLogger } from './test-logger.js';
import { collectRoutes, listRoutes, type CollectedRoute, type RouteInfo } from './route-catalog.js';
import { createTestDb, dialectOf, type TestDb, type TestStoreKind } from './test-databases.js';

export const TEST_JWT_SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';
/**
 * The encryption key of this test run's deployment: every composition root on one store shares
 * it, as every process of a deployment shares CORRAL_ENCRYPTION_KEY.
 */
export const TEST_ENCRYPTION_KEY = generateEncryptionKey();

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
  /** What the service logged (workers' errors among it). */
  log: TestLogger;
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
  opts: {
    plan?: 'free' | 'team' | 'enterprise';
    jwt?: Partial<JwtSettings>;
    /** Options of the composition root to override (rate limits, retention, alert delivery). */
    container?: Partial<Pick<ContainerOptions, 'rateLimits' | 'retentionDays' | 'alerts' | 'encryptionKey' | 'otlpGrpc' | 'prices' | 'dashboardDir'>>;
    /** Route modules registered on the API host after the service's own (tests of the route walks). */
    extraApiRoutes?: RouteModule[];
  } = {},
): Promise<TestContext> {
  const dialect = dialectOf(kind);
  const testDb = await createTestDb(kind);
  const clock = createTestClock();
  const log = createTestLogger();
  const container = await createContainer({
    db: testDb.db,
    clock,
    log,
    defaultPlan: opts.plan ?? 'enterprise',
    jwt: { secret: TEST_JWT_SECRET, ...opts.jwt },
    encryptionKey: TEST_ENCRYPTION_KEY,
    ...opts.container,
  });
  const collected = { api: [] as CollectedRoute[], ingest: [] as CollectedRoute[] };
  const observed = {
    ...container,
    apiRoutes: [collectRoutes(collected.api), ...container.apiRoutes, ...(opts.extraApiRoutes ?? [])],
    ingestRoutes: [collectRoutes(collected.ingest), ...container.ingestRoutes],
  };
  const appOptions = { container: observed, logger: undefined, bodyLimitBytes: 5 * 1024 * 1024 };
  const { app: api } = await buildApiApp(appOptions);
  const { app: ingest } = await buildIngestApp(appOptions);
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
    log,
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
      await stopWorkers(container.workers, log);
      await testDb.close();
    },
  };
}

/**
 * Another composition root on a given store, what a second process would hold, without hosts:
 * for workers that must share the store with the first (two alert evaluators).
 */
export async function buildSecondContainer(
  db: Db,
  clock: Clock,
  options: Partial<Pick<ContainerOptions, 'alerts' | 'encryptionKey'>> = {},
): Promise<Container & { close(): Promise<void> }> {
  const log = createTestLogger();
  const container = await createContainer({ db, clock, log, defaultPlan: 'enterprise', jwt: { secret: TEST_JWT_SECRET }, encryptionKey: TEST_ENCRYPTION_KEY, ...options });
  return { ...container, close: async () => void (await stopWorkers(container.workers, log)) };
}

/**
 * Another API host on a given store, with its own composition root: what a second process would
 * be. Closing the app stops its workers.
 */
export async function buildSecondApp(
  db: Db,
  clock: Clock,
  options: Partial<Pick<ContainerOptions, 'rateLimits' | 'retentionDays' | 'defaultPlan'>> = {},
): Promise<FastifyInstance> {
  const log = createTestLogger();
  const container = await createContainer({ db, clock, log, defaultPlan: 'enterprise', jwt: { secret: TEST_JWT_SECRET }, encryptionKey: TEST_ENCRYPTION_KEY, ...options });
  const { app } = await buildApiApp({ container, logger: undefined, bodyLimitBytes: 5 * 1024 * 1024 });
  app.addHook('onClose', async () => void (await stopWorkers(container.workers, log)));
  await app.ready();
  return app;
}
