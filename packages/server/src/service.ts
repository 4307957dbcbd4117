import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import path from 'node:path';
import { buildApiApp, buildIngestApp } from './app.js';
import type { Config } from './config.js';
import { createContainer } from './container.js';
import { createDatabase, type Db } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { createHttpMetrics } from './http/metrics.js';
import { systemClock } from './lib/clock.js';
import { loadOrCreateSecret } from './lib/secrets.js';
import { generateSigningKeyPem } from './features/signing/index.js';

export const SQLITE_FILE = 'corral.sqlite';

/** Opens the configured store: PostgreSQL when DATABASE_URL is set, else SQLite in DATA_DIR. */
export function openDatabase(config: Config): Db {
  return createDatabase({
    databaseUrl: config.databaseUrl,
    sqlitePath: path.join(config.dataDir, SQLITE_FILE),
    poolSize: config.databasePoolSize,
  });
}

/** The HS256 secret: configured, or generated once into DATA_DIR. */
export const jwtSecretOf = (config: Config): string => config.jwt.secret ?? loadOrCreateSecret(config.dataDir, 'jwt-secret');

/** The policy-signing key: configured, or generated once into DATA_DIR (a PKCS#8 PEM). */
export const signingKeyOf = (config: Config): string =>
  config.signingKey ?? loadOrCreateSecret(config.dataDir, 'signing-key.pem', generateSigningKeyPem);

/** Wires the features for a configuration and store; the OpenAPI generator shares it. */
export function createServiceContainer(config: Config, db: Db) {
  return createContainer({
    db,
    clock: systemClock,
    defaultPlan: config.defaultPlan,
    rateLimits: config.rateLimits,
    retentionDays: config.retentionDays,
    jwt: { ...config.jwt, secret: jwtSecretOf(config) },
    signingKey: signingKeyOf(config),
  });
}

/** How long stopping waits for requests still running after the listeners closed. */
export const DRAIN_TIMEOUT_MS = 10_000;

/**
 * Counts requests from arrival until their answer is written. `app.close()` waits for open
 * connections, not handlers: a handler whose client has gone keeps running after it resolves,
 * and closing the store under it would fail it half way (the store reports "driver has
 * already been destroyed"). Every reply ends with `res.end`, even one nobody reads.
 */
function trackRequests(app: FastifyInstance) {
  let running = 0;
  let idle: (() => void) | undefined;
  app.addHook('onRequest', async (_request, reply) => {
    running += 1;
    const raw = reply.raw;
    const end = raw.end;
    let ended = false;
    raw.end = function (this: typeof raw, ...args: unknown[]) {
      if (!ended) {
        ended = true;
        running -= 1;
        if (running === 0) idle?.();
      }
      return (end as (...a: unknown[]) => typeof raw).apply(this, args);
    } as typeof raw.end;
  });
  return {
    async drained(timeoutMs: number): Promise<void> {
      if (running === 0) return;
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        idle = resolve;
        timer = setTimeout(resolve, timeoutMs);
      });
      clearTimeout(timer);
    },
  };
}

export interface RunningService {
  readonly api: FastifyInstance | undefined;
  readonly ingest: FastifyInstance | undefined;
  stop(): Promise<void>;
}

/**
 * Start-up in order: open the store → migrate → wire → listen. The hosts a process serves
 * follow CORRAL_ROLE. Stopping closes listeners (in-flight requests finish, including those
 * whose client has gone, for at most DRAIN_TIMEOUT_MS), then workers, then the store.
 */
export async function startService(config: Config, logger: FastifyServerOptions['logger']): Promise<RunningService> {
  const db = openDatabase(config);
  await migrateToLatest(db);
  const container = await createServiceContainer(config, db);
  const metrics = createHttpMetrics();
  const appOptions = { container, metrics, logger, bodyLimitBytes: config.bodyLimitBytes };
  const servesApi = config.role === 'all' || config.role === 'api';
  const servesIngest = config.role === 'all' || config.role === 'ingest';
  const api = servesApi ? await buildApiApp(appOptions) : undefined;
  const ingest = servesIngest ? await buildIngestApp(appOptions) : undefined;
  const requests = [api, ingest].flatMap((app) => (app ? [trackRequests(app)] : []));
  const runsWorkers = config.role === 'all' || config.role === 'worker';
  if (runsWorkers) for (const worker of container.workers) await worker.start();
  await api?.listen({ port: config.port, host: config.host });
  await ingest?.listen({ port: config.ingestPort, host: config.host });

  return {
    api,
    ingest,
    async stop() {
      await Promise.all([api?.close(), ingest?.close()]);
      await Promise.all(requests.map((r) => r.drained(DRAIN_TIMEOUT_MS)));
      if (runsWorkers) for (const worker of [...container.workers].reverse()) await worker.stop();
      await db.close();
    },
  };
}
