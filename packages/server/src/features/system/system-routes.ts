import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Metrics } from '../../lib/metrics.js';

const Health = Type.Object({ status: Type.Literal('ok') });

/** Health on every host; `/metrics` and `/openapi.json` where asked for. */
export const systemRoutes: FastifyPluginAsyncTypebox<{ metrics?: Metrics; openapi?: boolean }> = async (app, opts) => {
  app.get(
    '/healthz',
    { config: { auth: { public: true } }, schema: { tags: ['system'], summary: 'Ready to serve', response: { 200: Health } } },
    async () => ({ status: 'ok' as const }),
  );

  const { metrics } = opts;
  if (metrics) {
    app.get(
      '/metrics',
      { config: { auth: { public: true } }, schema: { tags: ['system'], summary: 'Prometheus metrics', produces: ['text/plain'] } },
      async (_request, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
    );
  }

  if (opts.openapi) {
    app.get(
      '/openapi.json',
      { config: { auth: { public: true } }, schema: { hide: true } },
      async () => app.swagger(),
    );
  }
};
