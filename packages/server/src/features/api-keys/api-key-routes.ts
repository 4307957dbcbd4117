import { ApiKey, CreateApiKeyBody, CreatedApiKey, IdParams, Page, PageQuery, Success } from '@corral/contracts';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { actorOf } from '../../domain/principal.js';
import { parseIdCursor } from '../../lib/cursor.js';
import type { ApiKeyService } from './api-key-service.js';

const KeyParams = IdParams('key_id');
const tags = ['api-keys'];

/** Keys are managed by people only (JWT): an API key cannot mint or revoke keys. */
export const apiKeyRoutes: FastifyPluginAsyncTypebox<{ apiKeyService: ApiKeyService }> = async (app, { apiKeyService }) => {
  app.post(
    '/v1/keys',
    {
      config: { auth: { user: 'admin' } },
      schema: { tags, summary: 'Create an API key (the full key is returned once)', body: CreateApiKeyBody, response: { 200: CreatedApiKey } },
    },
    async (request) => {
      const principal = principalOf(request);
      return apiKeyService.create(principal.orgId, actorOf(principal), request.body);
    },
  );

  app.get(
    '/v1/keys',
    {
      config: { auth: { user: 'viewer' } },
      schema: { tags, summary: 'List API keys, newest first', querystring: PageQuery(20, 100), response: { 200: Page(ApiKey) } },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      return apiKeyService.list(principalOf(request).orgId, limit, parseIdCursor(cursor));
    },
  );

  app.post(
    '/v1/keys/:key_id/revoke',
    {
      config: { auth: { user: 'admin' } },
      schema: { tags, summary: 'Revoke an API key; it stops working at once', params: KeyParams, response: { 200: Success } },
    },
    async (request) => {
      const principal = principalOf(request);
      await apiKeyService.revoke(principal.orgId, actorOf(principal), request.params.key_id);
      return { success: true as const };
    },
  );

  app.delete(
    '/v1/keys/:key_id',
    {
      config: { auth: { user: 'admin' } },
      schema: { tags, summary: 'Delete a revoked API key', params: KeyParams, response: { 200: Success } },
    },
    async (request) => {
      const principal = principalOf(request);
      await apiKeyService.delete(principal.orgId, actorOf(principal), request.params.key_id);
      return { success: true as const };
    },
  );
};
