import { ControlState, IdParams } from '@corral/contracts';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { openSse } from '../../http/sse.js';
import type { ControlService, StreamRequest } from './control-service.js';

const AgentParams = IdParams('agent_id');
const tags = ['control'];
const EventStream = Type.String({ description: 'text/event-stream: init, then kill_switch and policy_updated; `: heartbeat` every 15 s' });

export interface ControlRouteOptions {
  controlService: ControlService;
  /** When the credential behind a user's stream expires (the session's JWT `exp`), if known. */
  sessionExpiry(request: FastifyRequest): number | undefined;
}

export const controlRoutes: FastifyPluginAsyncTypebox<ControlRouteOptions> = async (app, { controlService, sessionExpiry }) => {
  controlService.setErrorHandler((err) => app.log.error({ err }, 'control plane'));
  // Connections that have not sent a request yet (preconnects, aborted client attempts).
  const silent = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    if (silent.size > 1024) for (const s of silent) if (s.destroyed) silent.delete(s);
    silent.add(socket);
  });
  app.server.on('request', (request: IncomingMessage) => silent.delete(request.socket));

  // Open streams would keep server.close() waiting forever: end them first. Then connections
  // that carry no request (idle keep-alive ones, and ones that never sent a byte) are closed
  // until the server is done, or close() would wait for them as well.
  let sweep: NodeJS.Timeout | undefined;
  app.addHook('preClose', async () => {
    await controlService.shutdown();
    if (!app.server.listening) return;
    const closeQuiet = () => {
      app.server.closeIdleConnections();
      for (const socket of silent) if (socket.bytesRead === 0) socket.destroy();
    };
    closeQuiet();
    sweep = setInterval(closeQuiet, 100);
    sweep.unref();
  });
  app.addHook('onClose', async () => clearInterval(sweep));

  async function stream(request: FastifyRequest, reply: FastifyReply, agentId: string): Promise<void> {
    const p = principalOf(request);
    await controlService.prepare(p.orgId, agentId);
    const opened: StreamRequest = {
      orgId: p.orgId,
      agentId,
      keyId: p.kind === 'api_key' ? p.keyId : undefined,
      expiresAt: p.kind === 'user' ? sessionExpiry(request) : undefined,
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
        summary: 'The control stream for the dashboard (cookie session)',
        params: AgentParams,
        produces: ['text/event-stream'],
        response: { 200: EventStream },
      },
    },
    (request, reply) => stream(request, reply, request.params.agent_id),
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
