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

export interface RunningService {
  readonly api: FastifyInstance | undefined;
  readonly ingest: FastifyInstance | undefined;
  stop(): Promise<void>;
}

/**
 * Start-up in order: open the store → migrate → wire → listen. The hosts a process serves
 * follow CORRAL_ROLE. Stopping closes listeners (in-flight requests finish), then workers,
 * then the store.
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
  const runsWorkers = config.role === 'all' || config.role === 'worker';
  if (runsWorkers) for (const worker of container.workers) await worker.start();
  await api?.listen({ port: config.port, host: config.host });
  await ingest?.listen({ port: config.ingestPort, host: config.host });

  return {
    api,
    ingest,
    async stop() {
      await Promise.all([api?.close(), ingest?.close()]);
      if (runsWorkers) for (const worker of [...container.workers].reverse()) await worker.stop();
      await db.close();
    },
  };
}
