import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { fastifyCookie } from '@fastify/cookie';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { randomUUID } from 'node:crypto';
import type { Container } from './container.js';
import { authPlugin } from './http/auth.js';
import { frameworkErrorHandler, installErrorHandling } from './http/error-handler.js';
import { installMetrics } from './http/metrics.js';
import { installOpenApi } from './http/openapi.js';
import { installOversizedBodyDrain } from './http/oversized-bodies.js';
import { type GracefulShutdown, installGracefulShutdown } from './http/shutdown.js';
import { installValidation } from './http/validation.js';
import { systemRoutes } from './features/system/index.js';

export const SERVICE_VERSION = '0.1.0';

export interface AppOptions {
  container: Pick<Container, 'authenticator' | 'metrics' | 'apiRoutes' | 'ingestRoutes'>;
  /** The process's pino instance; undefined logs nothing (tests, tools). */
  logger: FastifyBaseLogger | undefined;
  bodyLimitBytes: number;
}

/** A host: the Fastify instance and what stopping it needs. */
export interface Host {
  readonly app: FastifyInstance;
  readonly shutdown: GracefulShutdown;
}

const requestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/;

/** The parts both hosts share: validation, errors, auth, metrics, request ids, shutdown. No I/O. */
async function createBase(name: 'api' | 'ingest' | 'worker', opts: AppOptions): Promise<Host> {
  const app = Fastify({
    ...(opts.logger ? { loggerInstance: opts.logger } : { logger: false }),
    bodyLimit: opts.bodyLimitBytes,
    // A caller's X-Request-Id is kept (if sane) so logs join up across services.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && requestIdPattern.test(given) ? given : randomUUID();
    },
    return503OnClosing: true,
    // A request must arrive whole within this time: a client that stalls mid-upload is cut off
    // instead of holding a connection (and a stop) forever. Generous for 5 MiB on a slow link.
    requestTimeout: 120_000,
    frameworkErrors: frameworkErrorHandler,
    forceCloseConnections: 'idle',
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Every endpoint reads JSON; a text body gets the same 415 as any other format it does not read.
  app.removeContentTypeParser('text/plain');
  const shutdown = installGracefulShutdown(app);
  installValidation(app);
  installErrorHandling(app);
  installMetrics(app, opts.container.metrics, name);
  installOversizedBodyDrain(app);
  app.addHook('onSend', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });
  // Before auth: the dashboard's session cookie is read while authenticating.
  await app.register(fastifyCookie);
  await app.register(authPlugin, { authenticator: opts.container.authenticator });
  return { app, shutdown };
}

/** The main API host (PORT). */
export async function buildApiApp(opts: AppOptions): Promise<Host> {
  const host = await createBase('api', opts);
  await installOpenApi(host.app, SERVICE_VERSION);
  await host.app.register(systemRoutes, { metrics: opts.container.metrics, openapi: true });
  for (const register of opts.container.apiRoutes) await register(host.app);
  return host;
}

/** The ingest host (INGEST_PORT): telemetry only. */
export async function buildIngestApp(opts: AppOptions): Promise<Host> {
  const host = await createBase('ingest', opts);
  await host.app.register(systemRoutes, { metrics: opts.container.metrics });
  for (const register of opts.container.ingestRoutes) await register(host.app);
  return host;
}

/**
 * A worker process's only listener (PORT): `/healthz` and `/metrics`, so its evaluation lag and
 * delivery outcomes can be scraped like the other roles'.
 */
export async function buildWorkerApp(opts: AppOptions): Promise<Host> {
  const host = await createBase('worker', opts);
  await host.app.register(systemRoutes, { metrics: opts.container.metrics });
  return host;
}
