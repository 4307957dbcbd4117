import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface HttpMetrics {
  readonly registry: Registry;
  readonly requests: Counter<'host' | 'method' | 'route' | 'status'>;
  readonly duration: Histogram<'host' | 'method' | 'route'>;
}

/** One registry per process; both hosts record into it with a `host` label. */
export function createHttpMetrics(): HttpMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    requests: new Counter({
      name: 'corral_http_requests_total',
      help: 'HTTP requests by route template and status',
      labelNames: ['host', 'method', 'route', 'status'],
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'corral_http_request_duration_seconds',
      help: 'HTTP request latency by route template',
      labelNames: ['host', 'method', 'route'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
  };
}

/** Records every response under its route template (never the raw URL: bounded label values). */
export function installMetrics(app: FastifyInstance, metrics: HttpMetrics, host: string): void {
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.requests.inc({ host, method: request.method, route, status: String(reply.statusCode) });
    metrics.duration.observe({ host, method: request.method, route }, reply.elapsedTime / 1000);
  });
}
