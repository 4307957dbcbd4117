import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../lib/metrics.js';

/** Records every response under its route template (never the raw URL: bounded label values). */
export function installMetrics(app: FastifyInstance, metrics: Metrics, host: string): void {
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.requests.inc({ host, method: request.method, route, status: String(reply.statusCode) });
    metrics.duration.observe({ host, method: request.method, route }, reply.elapsedTime / 1000);
  });
}
