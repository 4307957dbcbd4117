import type { FastifyBaseLogger } from 'fastify';
import path from 'node:path';
import { pino } from 'pino';
import { buildApiApp, buildIngestApp, buildWorkerApp, type Host } from './app.js';
import { type Config, ConfigError } from './config.js';
import { createContainer } from './container.js';
import { createDatabase, type Db } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { systemClock } from './lib/clock.js';
import { startWorkers, stopWorkers } from './lib/lifecycle.js';
import { loadOrCreateSecret } from './lib/secrets.js';
import { generateEncryptionKey } from './lib/secret-box.js';
import { generateSigningKeyPem } from './features/signing/index.js';

/*
 * The service's one start-up path, in order:
 *   open the store → migrate → compose (container.ts) → build the hosts (app.ts)
 *   → start the workers → listen.
 * Stopping goes back the same way: close the listeners (open streams end, requests in flight
 * finish, for at most DRAIN_TIMEOUT_MS), stop the workers in reverse order, close the store.
 * `main.ts` (and `corral start`) call `runService`, which adds the signals.
 */

export const SQLITE_FILE = 'corral.sqlite';

/** How long stopping waits for requests in flight, and then for handlers whose client has gone. */
export const DRAIN_TIMEOUT_MS = 10_000;

/** Opens the configured store: PostgreSQL when DATABASE_URL is set, else SQLite in DATA_DIR. */
export function openDatabase(config: Config): Db {
  return config.databaseUrl
    ? createDatabase({ databaseUrl: config.databaseUrl, poolSize: config.databasePoolSize })
    : createDatabase({ sqliteFile: path.join(config.dataDir, SQLITE_FILE) });
}

/** The HS256 secret: configured, or generated once into DATA_DIR. */
export const jwtSecretOf = (config: Config): string => config.jwt.secret ?? loadOrCreateSecret(config.dataDir, 'jwt-secret');

/** The policy-signing key: configured, or generated once into DATA_DIR (a PKCS#8 PEM). */
export const signingKeyOf = (config: Config): string =>
  config.signingKey ?? loadOrCreateSecret(config.dataDir, 'signing-key.pem', generateSigningKeyPem);

/** The key that encrypts stored secrets: configured, or generated once into DATA_DIR. */
export const encryptionKeyOf = (config: Config): string =>
  config.encryptionKey ?? loadOrCreateSecret(config.dataDir, 'encryption-key', generateEncryptionKey);

/** Wires the features for a configuration and store; the OpenAPI generator shares it. */
export function composeService(config: Config, db: Db, log: FastifyBaseLogger) {
  return createContainer({
    db,
    clock: systemClock,
    log,
    defaultPlan: config.defaultPlan,
    rateLimits: config.rateLimits,
    retentionDays: config.retentionDays,
    jwt: { ...config.jwt, secret: jwtSecretOf(config) },
    signingKey: signingKeyOf(config),
    encryptionKey: encryptionKeyOf(config),
    alerts: config.alerts,
    prices: config.prices,
    otlpGrpc: config.otlpGrpcPort === undefined ? undefined : { host: config.host, port: config.otlpGrpcPort },
    bodyLimitBytes: config.bodyLimitBytes,
    dashboardDir: config.dashboardDir,
  });
}

export interface RunningService {
  readonly log: FastifyBaseLogger;
  /** The bound addresses (with PORT=0 the system picks the ports); undefined for a host this role does not serve. */
  readonly urls: { readonly api: string | undefined; readonly ingest: string | undefined; readonly otlpGrpc: string | undefined };
  /** Stops everything once; answers whether every part stopped cleanly. */
  stop(): Promise<boolean>;
}

function urlOf(host: Host | undefined): string | undefined {
  const address = host?.app.addresses()[0];
  if (address === undefined || typeof address === 'string') return address;
  const name = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${name}:${address.port}`;
}

/** A port already taken is a configuration problem: say which variable moves it. */
function explainListenError(err: unknown, variable: 'PORT' | 'INGEST_PORT', port: number, host: string): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'EADDRINUSE') return new ConfigError([`${variable}: port ${port} on ${host} is already in use; set ${variable} to a free port, or stop what holds it`]);
  if (code === 'EACCES') return new ConfigError([`${variable}: port ${port} needs privileges; set ${variable} to a port above 1023`]);
  if (code === 'EADDRNOTAVAIL') return new ConfigError([`HOST: ${host} is not an address of this machine`]);
  return err;
}

async function listen(host: Host | undefined, config: Config, variable: 'PORT' | 'INGEST_PORT'): Promise<void> {
  if (!host) return;
  const port = variable === 'PORT' ? config.port : config.ingestPort;
  try {
    await host.app.listen({ port, host: config.host });
  } catch (err) {
    throw explainListenError(err, variable, port, config.host);
  }
}

export async function startService(config: Config, log: FastifyBaseLogger = pino({ level: config.logLevel })): Promise<RunningService> {
  const db = openDatabase(config);
  const hosts: Host[] = [];
  let workers: Parameters<typeof stopWorkers>[0] = [];
  let stopped: Promise<boolean> | undefined;

  async function stop(): Promise<boolean> {
    const closed = await Promise.allSettled(hosts.map(({ shutdown }) => shutdown.close(DRAIN_TIMEOUT_MS)));
    for (const c of closed) if (c.status === 'rejected') log.error({ err: c.reason }, 'a host did not close cleanly');
    const workersStopped = await stopWorkers(workers, log);
    const storeClosed = await db.close().then(() => true, (err: unknown) => {
      log.error({ err }, 'the store did not close cleanly');
      return false;
    });
    return closed.every((c) => c.status === 'fulfilled') && workersStopped && storeClosed;
  }

  try {
    await migrateToLatest(db);
    const container = await composeService(config, db, log);
    const appOptions = { container, logger: log, bodyLimitBytes: config.bodyLimitBytes };
    // A worker serves only /healthz and /metrics, on PORT.
    const api = config.role === 'all' || config.role === 'api' ? await buildApiApp(appOptions)
      : config.role === 'worker' ? await buildWorkerApp(appOptions) : undefined;
    const ingest = config.role === 'all' || config.role === 'ingest' ? await buildIngestApp(appOptions) : undefined;
    hosts.push(...[api, ingest].filter((h): h is Host => h !== undefined));
    const runsJobs = config.role === 'all' || config.role === 'worker';
    const servesIngest = ingest !== undefined;
    const toStart = container.workers.filter((w) => w.kind === 'resource' || (w.kind === 'job' && runsJobs) || (w.kind === 'listener' && servesIngest));
    await startWorkers(toStart, log);
    workers = toStart;
    await listen(api, config, 'PORT');
    await listen(ingest, config, 'INGEST_PORT');
    const urls = { api: urlOf(api), ingest: urlOf(ingest), otlpGrpc: servesIngest ? container.otlpGrpc?.address() : undefined };
    log.info({ role: config.role, store: db.engine, ...urls }, 'corral started');
    return { log, urls, stop: () => (stopped ??= stop()) };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Runs the service until SIGTERM or SIGINT, then stops it cleanly and exits 0 (1 when a part
 * did not stop cleanly). The start-up path behind both `npm start` and `corral start`.
 */
export async function runService(config: Config): Promise<RunningService> {
  const service = await startService(config);
  const onSignal = (signal: NodeJS.Signals) => {
    service.log.info({ signal }, 'stopping');
    void service.stop().then((clean) => process.exit(clean ? 0 : 1));
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  return service;
}
