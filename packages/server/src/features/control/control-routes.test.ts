import { EventSource } from 'eventsource';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildTestContext, type TestContext } from '../../../test/helpers/build-test-app.js';
import { testDialects } from '../../../test/helpers/test-databases.js';
import type { DialectName } from '../../db/dialect/types.js';

interface Received {
  type: string;
  data: Record<string, unknown>;
  id: string;
}

async function until(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The real `eventsource` client, with the API key header the browser API cannot send. */
function listen(url: string, headers: Record<string, string>) {
  const received: Received[] = [];
  const errors: Array<{ code?: number | undefined }> = [];
  const sentLastEventIds: Array<string | null> = [];
  const es = new EventSource(url, {
    fetch: (input, init) => {
      sentLastEventIds.push(new Headers(init?.headers).get('last-event-id'));
      return fetch(input, { ...init, headers: { ...init?.headers, ...headers } });
    },
  });
  for (const type of ['init', 'kill_switch', 'policy_updated', 'telemetry']) {
    es.addEventListener(type, (e) => received.push({ type, data: JSON.parse(e.data), id: e.lastEventId }));
  }
  es.addEventListener('error', (e) => errors.push({ code: (e as { code?: number }).code }));
  const ofType = (type: string) => received.filter((r) => r.type === type);
  return {
    es, received, errors, sentLastEventIds, ofType,
    waitFor: (type: string, count = 1) => until(() => ofType(type).length >= count, `${count} ${type}`),
  };
}

/** A plain streaming fetch: shows the raw `retry:` line and when the server ends the stream. */
async function rawStream(url: string, headers: Record<string, string>) {
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers } });
  const reader = res.body?.getReader();
  if (!reader) throw new Error('no body');
  const decoder = new TextDecoder();
  const state = { text: '', ended: false };
  void (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        state.text += decoder.decode(value, { stream: true });
      }
    } catch {
      // A reset connection ends the stream as well.
    }
    state.ended = true;
  })();
  return { res, state, cancel: () => reader.cancel().catch(() => undefined) };
}

/** A server of its own, for tests that watch the whole process (its timers, its shutdown). */
async function startLocal(dialect: DialectName) {
  const ctx = await buildTestContext(dialect);
  await ctx.api.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(ctx.api.server.address() as AddressInfo).port}`;
  const org = await ctx.newOrg();
  const key = (await ctx.createKey(org.token)).key;
  const agentId = (await ctx.request({ method: 'POST', url: '/v1/agents', token: org.token, payload: { name: 'local' } })).json<{ id: string }>().id;
  return { ctx, base, key, agentId };
}

describe.each(testDialects)('control stream on %s', (dialect) => {
  let ctx: TestContext;
  let base: string;
  let owner: { orgId: string; token: string };
  let apiKey: string;
  const sources: EventSource[] = [];

  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
    await ctx.api.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(ctx.api.server.address() as AddressInfo).port}`;
    owner = await ctx.newOrg();
    apiKey = (await ctx.createKey(owner.token, { kind: 'restricted', resources: { agents: 'read' } })).key;
  });
  afterAll(async () => {
    for (const es of sources) es.close();
    await ctx.close();
  });

  const newAgent = async () => (await ctx.request({ method: 'POST', url: '/v1/agents', token: owner.token, payload: { name: 'Streamed' } })).json<{ id: string }>().id;
  const killSwitch = (agentId: string, active: boolean) =>
    ctx.request({ method: 'POST', url: `/v1/agents/${agentId}/kill-switch`, token: owner.token, payload: { active } });
  const open = (agentId: string, headers: Record<string, string> = { 'x-api-key': apiKey }, path = 'control') => {
    const client = listen(`${base}/v1/agents/${agentId}/${path}`, headers);
    sources.push(client.es);
    return client;
  };

  it('pushes a rollback: the older version under a higher activation sequence, in the event and the signed bundle', async () => {
    const agentId = await newAgent();
    const create = (policy: object, activate: boolean) =>
      ctx.request({ method: 'POST', url: `/v1/agents/${agentId}/policies`, token: owner.token, payload: { policy, activate } });
    await create({ default: 'allow' }, true);
    await create({ mode: 'enforce', default: 'deny', rules: [] }, true);
    const client = open(agentId);
    await client.waitFor('init');
    const bundleOf = (data: Record<string, unknown>) =>
      JSON.parse(Buffer.from((data.policy_envelope as { payload: string }).payload, 'base64').toString()) as { version: number; sequence: number };
    expect(bundleOf(client.received[0]!.data)).toMatchObject({ version: 2, sequence: 2 });

    const rollback = await ctx.request({ method: 'POST', url: `/v1/agents/${agentId}/policies/1/activate`, token: owner.token });
    expect(rollback.statusCode).toBe(200);
    await client.waitFor('policy_updated');
    const update = client.ofType('policy_updated')[0]!.data;
    expect(update).toMatchObject({ version: 1, sequence: 3 });
    expect(bundleOf(update)).toMatchObject({ agent_id: agentId, version: 1, sequence: 3 });
    const polled = await ctx.request({ method: 'GET', url: `/v1/agents/${agentId}/control/state`, apiKey });
    expect(bundleOf(polled.json())).toMatchObject({ version: 1, sequence: 3 });
  });

  it('sends init with the current state, then kill_switch and policy_updated, each with an id', async () => {
    const agentId = await newAgent();
    await killSwitch(agentId, true);
    const client = open(agentId);
    await client.waitFor('init');
    expect(client.received[0]).toMatchObject({ type: 'init', data: { kill_switch_active: true, active_policy_hash: null, policy_envelope: null } });
    expect(client.received[0]?.id).not.toBe('');

    await killSwitch(agentId, false);
    await client.waitFor('kill_switch');
    expect(client.ofType('kill_switch')[0]?.data).toEqual({ active: false });

    const created = await ctx.request({
      method: 'POST', url: `/v1/agents/${agentId}/policies`, token: owner.token,
      payload: { policy: { mode: 'enforce', default: 'allow', rules: [{ name: 'r', deny: { url: 'a.com/**' } }] }, activate: true },
    });
    await client.waitFor('policy_updated');
    const update = client.ofType('policy_updated')[0];
    expect(update?.data).toMatchObject({ version: 1, sequence: 1, hash: created.json().hash });
    const envelope = update?.data.policy_envelope as { payload: string; payloadType: string };
    expect(envelope.payloadType).toBe('application/vnd.corral.policy-bundle+json');
    expect(JSON.parse(Buffer.from(envelope.payload, 'base64').toString())).toMatchObject({ agent_id: agentId, version: 1, sequence: 1 });
    const ids = client.received.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(client.received.map((r) => r.type)).toEqual(['init', 'kill_switch', 'policy_updated']);
  });

  it('starts a new stream with the active policy in init, and states the same through polling', async () => {
    const agentId = await newAgent();
    const created = await ctx.request({ method: 'POST', url: `/v1/agents/${agentId}/policies`, token: owner.token, payload: { policy: { default: 'allow' }, activate: true } });
    const client = open(agentId);
    await client.waitFor('init');
    expect(client.received[0]?.data).toMatchObject({ kill_switch_active: false, active_policy_hash: created.json().hash });
    const state = await ctx.request({ method: 'GET', url: `/v1/agents/${agentId}/control/state`, apiKey });
    expect(state.statusCode).toBe(200);
    expect(state.headers['cache-control']).toBe('no-store');
    expect(state.json()).toMatchObject({ kill_switch_active: false, policy_envelope: { payloadType: 'application/vnd.corral.policy-bundle+json' } });
    await killSwitch(agentId, true);
    expect((await ctx.request({ method: 'GET', url: `/v1/agents/${agentId}/control/state`, apiKey })).json().kill_switch_active).toBe(true);
  });

  it('tells the client how long to wait before reconnecting', async () => {
    const agentId = await newAgent();
    const raw = await rawStream(`${base}/v1/agents/${agentId}/control`, { 'x-api-key': apiKey });
    expect(raw.res.headers.get('content-type')).toContain('text/event-stream');
    await until(() => raw.state.text.includes('event: init'), 'init');
    expect(raw.state.text).toMatch(/^retry: \d{4}\n\nid: [0-9a-f-]{36}\nevent: init\ndata: \{/);
    await raw.cancel();
  });

  it('sends a heartbeat every 15 s to every stream from one timer, and tears down on disconnect', async () => {
    const local = await startLocal(dialect);
    const hub = local.ctx.container.streamHub;
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const url = `${local.base}/v1/agents/${local.agentId}/control`;
      const streams = [await rawStream(url, { 'x-api-key': local.key }), await rawStream(url, { 'x-api-key': local.key })];
      await until(() => streams.every((s) => s.state.text.includes('event: init')), 'init');
      expect(hub.stats()).toMatchObject({ streams: 2, heartbeatTimers: 1 });
      expect(vi.getTimerCount()).toBe(1);
      // The cycle is spread over the 15 s, so each stream gets one heartbeat per 15 s.
      const beats = (s: (typeof streams)[number]) => s.state.text.split(': heartbeat\n\n').length - 1;
      vi.advanceTimersByTime(15_000);
      await until(() => streams.every((s) => beats(s) === 1), 'one heartbeat each');
      vi.advanceTimersByTime(15_000);
      await until(() => streams.every((s) => beats(s) === 2), 'two heartbeats each');
      for (const s of streams) await s.cancel();
      await until(() => hub.stats().streams === 0, 'the streams to leave the hub');
      expect(hub.stats().heartbeatTimers).toBe(0);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
      await local.ctx.close();
    }
  });

  it('lets a dropped client resume: it sends Last-Event-ID and starts again from init', async () => {
    const agentId = await newAgent();
    const client = open(agentId);
    await client.waitFor('init');
    const lastId = client.received[0]?.id;
    ctx.container.streamHub.closeAgent(owner.orgId, agentId);
    await client.waitFor('init', 2);
    expect(client.sentLastEventIds).toEqual([null, lastId]);
    await killSwitch(agentId, true);
    await client.waitFor('kill_switch');
  });

  it('takes an API key with the agents scope, and answers errors before any stream starts', async () => {
    const agentId = await newAgent();
    const url = `/v1/agents/${agentId}/control`;
    expect((await ctx.request({ method: 'GET', url })).statusCode).toBe(401);
    expect((await ctx.request({ method: 'GET', url, token: owner.token })).statusCode).toBe(403);
    const eventsOnly = await ctx.createKey(owner.token, { kind: 'restricted', resources: { events: 'write' } });
    expect((await ctx.request({ method: 'GET', url, apiKey: eventsOnly.key })).statusCode).toBe(403);
    expect((await ctx.request({ method: 'GET', url: `${url}/state`, apiKey: eventsOnly.key })).statusCode).toBe(403);
    const other = await ctx.newOrg();
    const otherKey = (await ctx.createKey(other.token)).key;
    const foreign = await ctx.request({ method: 'GET', url, apiKey: otherKey });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.headers['content-type']).toContain('application/json');
    expect((await ctx.request({ method: 'GET', url: `${url}/state`, apiKey: otherKey })).statusCode).toBe(404);
  });

  it("closes a deleted agent's streams", async () => {
    const agentId = await newAgent();
    const raw = await rawStream(`${base}/v1/agents/${agentId}/control`, { 'x-api-key': apiKey });
    await until(() => raw.state.text.includes('event: init'), 'init');
    await ctx.request({ method: 'DELETE', url: `/v1/agents/${agentId}`, token: owner.token });
    await until(() => raw.state.ended, 'the stream to end');
    expect((await ctx.request({ method: 'GET', url: `/v1/agents/${agentId}/control`, apiKey })).statusCode).toBe(404);
  });

  it("closes a revoked key's streams, and the client's reconnect is refused", async () => {
    const agentId = await newAgent();
    const key = await ctx.createKey(owner.token);
    const client = open(agentId, { 'x-api-key': key.key });
    const other = open(agentId);
    await client.waitFor('init');
    await other.waitFor('init');
    await ctx.request({ method: 'POST', url: `/v1/keys/${key.id}/revoke`, token: owner.token });
    await until(() => client.errors.some((e) => e.code === 401), 'the reconnect to be refused');
    expect(client.es.readyState).toBe(EventSource.CLOSED);
    expect(other.es.readyState).toBe(EventSource.OPEN);
    await killSwitch(agentId, true);
    await other.waitFor('kill_switch');
  });

  it('serves the dashboard stream on a cookie session; cookie changes need the CSRF token', async () => {
    const agentId = await newAgent();
    const session = await ctx.request({ method: 'POST', url: '/v1/auth/session', token: owner.token });
    const cookie = String(session.headers['set-cookie']).split(';')[0] ?? '';
    const dashboard = open(agentId, { cookie }, 'control/dashboard-stream');
    const sdk = open(agentId);
    await dashboard.waitFor('init');
    await sdk.waitFor('init');

    const url = `/v1/agents/${agentId}/kill-switch`;
    const refused = await ctx.request({ method: 'POST', url, headers: { cookie }, payload: { active: true } });
    expect(refused.statusCode).toBe(403);
    const csrf = session.json<{ csrf_token: string }>().csrf_token;
    const allowed = await ctx.request({ method: 'POST', url, headers: { cookie, 'x-csrf-token': csrf }, payload: { active: true } });
    expect(allowed.statusCode).toBe(200);
    await dashboard.waitFor('kill_switch');
    await sdk.waitFor('kill_switch');
    expect(dashboard.ofType('kill_switch')[0]?.data).toEqual({ active: true });
    expect(sdk.ofType('kill_switch')).toHaveLength(1);

    expect((await ctx.request({ method: 'GET', url: `/v1/agents/${agentId}/control/dashboard-stream`, apiKey })).statusCode).toBe(403);
  });

  it('tells dashboard streams, never SDK streams, that new telemetry of the agent was stored, coalescing bursts', async () => {
    const agentId = await newAgent();
    const other = await newAgent();
    const session = await ctx.request({ method: 'POST', url: '/v1/auth/session', token: owner.token });
    const cookie = String(session.headers['set-cookie']).split(';')[0] ?? '';
    const dashboard = open(agentId, { cookie }, 'control/dashboard-stream');
    const otherDashboard = open(other, { cookie }, 'control/dashboard-stream');
    const sdk = open(agentId);
    await Promise.all([dashboard.waitFor('init'), otherDashboard.waitFor('init'), sdk.waitFor('init')]);

    const writer = (await ctx.createKey(owner.token)).key;
    const send = (n: number) =>
      ctx.request({
        method: 'POST', url: '/v1/telemetry', apiKey: writer,
        payload: { events: [{ agent_id: agentId, timestamp: new Date(ctx.clock.now()).toISOString(), request_id: `hint-${dialect}-${n}`, method: 'GET', url_host: 'a.example.com', url_path: '/', status_code: 200, latency_ms: 1, policy_result: 'allowed' }] },
      });
    expect((await send(0)).statusCode).toBe(200);
    await dashboard.waitFor('telemetry');
    expect(dashboard.ofType('telemetry')[0]?.data).toEqual({ agent_id: agentId });
    // A burst inside the hint interval: one trailing hint, not one per batch.
    for (let n = 1; n <= 5; n++) expect((await send(n)).statusCode).toBe(200);
    await dashboard.waitFor('telemetry', 2);
    await new Promise((r) => setTimeout(r, 600));
    expect(dashboard.ofType('telemetry').length).toBeLessThanOrEqual(3);
    expect(sdk.ofType('telemetry')).toHaveLength(0);
    expect(otherDashboard.ofType('telemetry')).toHaveLength(0);
  });

  it('stops even while a client holds a connection that has sent nothing', async () => {
    const local = await startLocal(dialect);
    const port = (local.ctx.api.server.address() as AddressInfo).port;
    const silent = net.connect(port, '127.0.0.1');
    silent.on('error', () => undefined);
    await new Promise((resolve) => silent.once('connect', resolve));
    const closed = new Promise((resolve) => silent.once('close', resolve));
    await local.ctx.close();
    await closed;
    expect(silent.destroyed).toBe(true);
  });

  it('ends open streams when the server stops', async () => {
    const local = await startLocal(dialect);
    const raw = await rawStream(`${local.base}/v1/agents/${local.agentId}/control`, { 'x-api-key': local.key });
    await until(() => raw.state.text.includes('event: init'), 'init');
    await local.ctx.close();
    await until(() => raw.state.ended, 'the stream to end');
    expect(local.ctx.container.streamHub.stats().streams).toBe(0);
  });
});
