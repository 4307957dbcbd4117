import {
  Agent, CreateAgentBody, IdParams, KillSwitchBody, Page, PageQuery, PublicKeyBody, PublicKeyResult, Success, UpdateAgentBody,
} from '@corral/contracts';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { actorOf } from '../../domain/principal.js';
import { parseIdCursor } from '../../lib/cursor.js';
import type { AgentService } from './agent-service.js';

const AgentParams = IdParams('agent_id');
const tags = ['agents'];
const read = { resource: 'agents', access: 'read' } as const;
const write = { resource: 'agents', access: 'write' } as const;

export const agentRoutes: FastifyPluginAsyncTypebox<{ agentService: AgentService }> = async (app, { agentService }) => {
  app.post(
    '/v1/agents',
    {
      config: { auth: { user: 'member', key: write } },
      schema: { tags, summary: 'Register an agent', body: CreateAgentBody, response: { 200: Type.Omit(Agent, ['active_policy_mode']) } },
    },
    async (request) => {
      const p = principalOf(request);
      return agentService.create(p.orgId, actorOf(p), request.body);
    },
  );

  app.get(
    '/v1/agents',
    {
      config: { auth: { user: 'viewer', key: read } },
      schema: { tags, summary: 'List agents, newest first', querystring: PageQuery(20, 100), response: { 200: Page(Agent) } },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      return agentService.list(principalOf(request).orgId, limit, parseIdCursor(cursor));
    },
  );

  app.get(
    '/v1/agents/:agent_id',
    {
      config: { auth: { user: 'viewer', key: read } },
      schema: { tags, summary: 'Get an agent', params: AgentParams, response: { 200: Agent } },
    },
    async (request) => agentService.get(principalOf(request).orgId, request.params.agent_id),
  );

  app.put(
    '/v1/agents/:agent_id',
    {
      config: { auth: { user: 'member', key: write } },
      schema: { tags, summary: 'Update an agent; omitted fields keep their values', params: AgentParams, body: UpdateAgentBody, response: { 200: Agent } },
    },
    async (request) => {
      const p = principalOf(request);
      return agentService.update(p.orgId, actorOf(p), request.params.agent_id, request.body);
    },
  );

  app.delete(
    '/v1/agents/:agent_id',
    {
      config: { auth: { user: 'admin' } },
      schema: { tags, summary: 'Delete an agent (soft: its telemetry is kept); people only (JWT admin+)', params: AgentParams, response: { 200: Success } },
    },
    async (request) => {
      const p = principalOf(request);
      await agentService.delete(p.orgId, actorOf(p), request.params.agent_id);
      return { success: true as const };
    },
  );

  app.post(
    '/v1/agents/:agent_id/kill-switch',
    {
      // People only (contract section 2): a runaway agent holding its own key must never be able
      // to release its kill switch, whatever the key's scope.
      config: { auth: { user: 'admin' } },
      schema: { tags, summary: 'Engage or release the kill switch; people only (JWT admin+)', params: AgentParams, body: KillSwitchBody, response: { 200: Agent } },
    },
    async (request) => {
      const p = principalOf(request);
      return agentService.setKillSwitch(p.orgId, actorOf(p), request.params.agent_id, request.body.active, request.body.reason);
    },
  );

  app.post(
    '/v1/agents/:agent_id/public-key',
    {
      config: { auth: { key: write } },
      schema: { tags, summary: "Register the agent's Ed25519 public key (SDK)", params: AgentParams, body: PublicKeyBody, response: { 200: PublicKeyResult } },
    },
    async (request) => {
      const p = principalOf(request);
      return agentService.registerPublicKey(p.orgId, actorOf(p), request.params.agent_id, request.body.public_key);
    },
  );
};
