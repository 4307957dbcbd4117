import { AuditEntry, Page, PageQuery } from '@corral/contracts';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { parseIdCursor, toPage } from '../../lib/cursor.js';
import { type AuditStore, toAuditEntry } from './audit-store.js';

const Query = Type.Composite([
  PageQuery(50, 200),
  Type.Object({
    action: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    target_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  }),
]);

export const auditRoutes: FastifyPluginAsyncTypebox<{ auditStore: AuditStore }> = async (app, { auditStore }) => {
  app.get(
    '/v1/audit-log',
    {
      config: { auth: { user: 'admin' } },
      schema: {
        tags: ['audit'],
        summary: 'Every mutation in the organization, newest first',
        querystring: Query,
        response: { 200: Page(AuditEntry) },
      },
    },
    async (request) => {
      const { orgId } = principalOf(request);
      const { limit, cursor, action, target_id } = request.query;
      const rows = await auditStore.list(orgId, { limit, before: parseIdCursor(cursor), action, targetId: target_id });
      return toPage(rows, limit, toAuditEntry);
    },
  );
};
