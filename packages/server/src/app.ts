import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { fastifyCookie } from '@fastify/cookie';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { randomUUID } from 'node:crypto';
import type { Container } from './container.js';
import { authPlugin } from './http/auth.js';
import { frameworkErrorHandler, installErrorHandling } from './http/error-handler.js';
import { type HttpMetrics, installMetrics } from './http/metrics.js';
import { installOpenApi } from './http/openapi.js';
import { installValidation } from './http/validation.js';
import { systemRoutes } from './features/system/index.js';

export const SERVICE_VERSION = '0.1.0';

export interface AppOptions {
  container: Container;
  metrics: HttpMetrics;
  logger: FastifyServerOptions['logger'];
  bodyLimitBytes: number;
}

const requestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/;

/** The parts both hosts share: validation, errors, auth, metrics, request ids. No I/O. */
async function createBase(host: 'api' | 'ingest', opts: AppOptions) {
  const app = Fastify({
    logger: opts.logger,
    bodyLimit: opts.bodyLimitBytes,
    // A caller's X-Request-Id is kept (if sane) so logs join up across services.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && requestIdPattern.test(given) ? given : randomUUID();
    },
    return503OnClosing: true,
    frameworkErrors: frameworkErrorHandler,
    forceCloseConnections: 'idle',
  }).withTypeProvider<TypeBoxTypeProvider>();
  installValidation(app);
  installErrorHandling(app);
  installMetrics(app, opts.metrics, host);
  app.addHook('onSend', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });
  // Before auth: the dashboard's session cookie is read while authenticating.
  await app.register(fastifyCookie);
  await app.register(authPlugin, { authenticator: opts.container.authenticator });
  return app;
}

/** The main API host (PORT). */
export async function buildApiApp(opts: AppOptions): Promise<FastifyInstance> {
  const app = await createBase('api', opts);
  await installOpenApi(app, SERVICE_VERSION);
  await app.register(systemRoutes, { metrics: opts.metrics, openapi: true });
  for (const register of opts.container.apiRoutes) await register(app);
  return app;
}

/** The ingest host (INGEST_PORT): telemetry and OTLP only. */
export async function buildIngestApp(opts: AppOptions): Promise<FastifyInstance> {
  const app = await createBase('ingest', opts);
  await app.register(systemRoutes, { metrics: opts.metrics });
  for (const register of opts.container.ingestRoutes) await register(app);
  return app;
}
