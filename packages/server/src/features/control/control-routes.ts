import { ControlState, IdParams } from '@corral/contracts';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { openSse } from '../../http/sse.js';
import type { ControlService, StreamRequest } from './control-service.js';

const AgentParams = IdParams('agent_id');
const tags = ['control'];
const EventStream = Type.String({ description: 'text/event-stream: init, then kill_switch and policy_updated; `: heartbeat` every 15 s' });

export const controlRoutes: FastifyPluginAsyncTypebox<{ controlService: ControlService }> = async (app, { controlService }) => {
  async function stream(request: FastifyRequest, reply: FastifyReply, agentId: string, isDashboard = false): Promise<void> {
    const p = principalOf(request);
    await controlService.prepare(p.orgId, agentId);
    const opened: StreamRequest = {
      orgId: p.orgId,
      agentId,
      keyId: p.kind === 'api_key' ? p.keyId : undefined,
      expiresAt: p.kind === 'user' ? p.expiresAt : undefined,
      isDashboard,
    };
    const sse = openSse(request, reply, { held: true });
    // The response has started, so a failure now can only end the stream.
    await controlService.attach(sse, opened).catch((err: unknown) => request.log.warn({ err }, 'control stream ended at start'));
  }

  app.get(
    '/v1/agents/:agent_id/control',
    {
      config: { auth: { key: { resource: 'agents', access: 'read' } } },
      schema: {
        tags,
        summary: 'Control stream for the SDK (SSE): init, kill_switch, policy_updated',
        params: AgentParams,
        produces: ['text/event-stream'],
        response: { 200: EventStream },
      },
    },
    (request, reply) => stream(request, reply, request.params.agent_id),
  );

  app.get(
    '/v1/agents/:agent_id/control/dashboard-stream',
    {
      config: { auth: { user: 'viewer' } },
      schema: {
        tags,
        summary: 'The control stream for the dashboard (cookie session), plus `telemetry` when new events of the agent are stored',
        params: AgentParams,
        produces: ['text/event-stream'],
        response: { 200: EventStream },
      },
    },
    (request, reply) => stream(request, reply, request.params.agent_id, true),
  );

  app.get(
    '/v1/agents/:agent_id/control/state',
    {
      config: { auth: { key: { resource: 'agents', access: 'read' } } },
      schema: { tags, summary: 'Polling fallback: kill switch and the active policy, signed now', params: AgentParams, response: { 200: ControlState } },
    },
    async (request, reply) => {
      void reply.header('cache-control', 'no-store');
      return controlService.state(principalOf(request).orgId, request.params.agent_id);
    },
  );
};
