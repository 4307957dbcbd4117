import { CreatePolicyBody, IdParams, Page, PageQuery, PolicyVersion, PolicyVersionParams } from '@corral/contracts';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { actorOf } from '../../domain/principal.js';
import { parseVersionCursor, type PolicyService } from './policy-service.js';

const AgentParams = IdParams('agent_id');
const tags = ['policies'];
const read = { resource: 'policies', access: 'read' } as const;
const write = { resource: 'policies', access: 'write' } as const;

export const policyRoutes: FastifyPluginAsyncTypebox<{ policyService: PolicyService }> = async (app, { policyService }) => {
  app.post(
    '/v1/agents/:agent_id/policies',
    {
      config: { auth: { user: 'member', key: write } },
      schema: {
        tags,
        summary: 'Create the next policy version from JSON or YAML; optionally activate it',
        params: AgentParams,
        body: CreatePolicyBody,
        response: { 200: PolicyVersion },
      },
    },
    async (request) => {
      const p = principalOf(request);
      return policyService.create(p.orgId, actorOf(p), request.params.agent_id, request.body);
    },
  );

  app.get(
    '/v1/agents/:agent_id/policies',
    {
      config: { auth: { user: 'viewer', key: read } },
      schema: { tags, summary: 'List policy versions, newest first', params: AgentParams, querystring: PageQuery(20, 100), response: { 200: Page(PolicyVersion) } },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      return policyService.list(principalOf(request).orgId, request.params.agent_id, limit, parseVersionCursor(cursor));
    },
  );

  app.get(
    '/v1/agents/:agent_id/policies/active',
    {
      config: { auth: { user: 'viewer', key: read } },
      schema: { tags, summary: 'The active policy version (404 when none)', params: AgentParams, response: { 200: PolicyVersion } },
    },
    async (request) => policyService.getActive(principalOf(request).orgId, request.params.agent_id),
  );

  app.get(
    '/v1/agents/:agent_id/policies/:version',
    {
      config: { auth: { user: 'viewer', key: read } },
      schema: { tags, summary: 'One policy version', params: PolicyVersionParams, response: { 200: PolicyVersion } },
    },
    async (request) => policyService.get(principalOf(request).orgId, request.params.agent_id, request.params.version),
  );

  app.post(
    '/v1/agents/:agent_id/policies/:version/activate',
    {
      config: { auth: { user: 'member', key: write } },
      schema: { tags, summary: 'Make a version active and push it to connected agents', params: PolicyVersionParams, response: { 200: PolicyVersion } },
    },
    async (request) => {
      const p = principalOf(request);
      return policyService.activate(p.orgId, actorOf(p), request.params.agent_id, request.params.version);
    },
  );
};
