import { AgentInstance, IdParams, Page, PageQuery, ReportInstanceBody } from '@corral/contracts';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { parseIdCursor } from '../../lib/cursor.js';
import type { InstanceService } from './instance-service.js';

const AgentParams = IdParams('agent_id');
const tags = ['agents'];

export const instanceRoutes: FastifyPluginAsyncTypebox<{ instanceService: InstanceService }> = async (app, { instanceService }) => {
  app.post(
    '/v1/agents/:agent_id/instances',
    {
      // The SDK's own key reports: a statement about what it runs, like its telemetry, so it takes
      // `events:write`, which an SDK key already holds. It needs no right to change the agent.
      config: { auth: { key: { resource: 'events', access: 'write' } } },
      schema: {
        tags,
        summary: 'Report what one SDK instance has applied (SDK API key, events:write)',
        params: AgentParams,
        body: ReportInstanceBody,
        response: { 200: AgentInstance },
      },
    },
    async (request) => instanceService.report(principalOf(request).orgId, request.params.agent_id, request.body),
  );

  app.get(
    '/v1/agents/:agent_id/instances',
    {
      config: { auth: { user: 'viewer', key: { resource: 'agents', access: 'read' } } },
      schema: {
        tags,
        summary: "The agent's SDK instances and the state each has applied, newest first",
        params: AgentParams,
        querystring: PageQuery(50, 200),
        response: { 200: Page(AgentInstance) },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      return instanceService.list(principalOf(request).orgId, request.params.agent_id, limit, parseIdCursor(cursor));
    },
  );
};
