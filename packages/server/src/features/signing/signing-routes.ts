import { PolicyKeys } from '@corral/contracts';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { SigningService } from './signing-service.js';

export const signingRoutes: FastifyPluginAsyncTypebox<{ signingService: SigningService }> = async (app, { signingService }) => {
  app.get(
    '/v1/policy-keys',
    {
      config: { auth: { user: 'viewer', key: 'any' } },
      schema: {
        tags: ['policies'],
        summary: 'Public keys that verify policy envelopes; the current key first, retired keys while their envelopes may live',
        response: { 200: PolicyKeys },
      },
    },
    async (_request, reply) => {
      // Short: an SDK that meets an unknown keyid refetches, and a rotation should show quickly.
      void reply.header('cache-control', 'private, max-age=60');
      return { keys: await signingService.publicKeys() };
    },
  );
};
