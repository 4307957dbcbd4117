import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../../../test/helpers/build-test-app.js';
import { testDialects } from '../../../test/helpers/test-databases.js';

const report = (instanceId: string, over: Record<string, unknown> = {}) => ({
  instance_id: instanceId, hostname: 'worker-1', sdk_version: '0.1.0', transport: 'sse', applied_at: new Date().toISOString(),
  policy_version: 2, policy_sequence: 3, policy_hash: `sha256:${'a'.repeat(64)}`, kill_switch_active: false, ...over,
});

describe.each(testDialects)('SDK instances on %s', (dialect) => {
  let ctx: TestContext;
  let owner: { orgId: string; token: string };
  let sdkKey: string;
  let agentId: string;
  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
    owner = await ctx.newOrg();
    sdkKey = (await ctx.createKey(owner.token, { kind: 'restricted', resources: { agents: 'read', events: 'write' } })).key;
    agentId = (await ctx.request({ method: 'POST', url: '/v1/agents', token: owner.token, payload: { name: 'Fleet' } })).json<{ id: string }>().id;
  });
  afterAll(() => ctx.close());

  const post = (body: unknown, apiKey = sdkKey, agent = agentId) => ctx.request({ method: 'POST', url: `/v1/agents/${agent}/instances`, apiKey, payload: body as object });
  const list = (query = '') => ctx.request({ method: 'GET', url: `/v1/agents/${agentId}/instances${query}`, token: owner.token });

  it('records each report and lists the applied state, newest instance first', async () => {
    expect((await post(report('i-1'))).statusCode).toBe(200);
    const second = await post(report('i-2', { transport: 'poll', kill_switch_active: true, policy_version: null, policy_sequence: null, policy_hash: null }));
    expect(second.json()).toMatchObject({ instance_id: 'i-2', transport: 'poll', connected: true, kill_switch_active: true, policy_hash: null });
    // A later report of i-1 replaces its state but keeps its place in the list.
    const later = await post(report('i-1', { kill_switch_active: true, policy_sequence: 4 }));
    expect(later.json()).toMatchObject({ instance_id: 'i-1', kill_switch_active: true, policy_sequence: 4 });
    const page = (await list()).json();
    expect(page.data.map((i: { instance_id: string }) => i.instance_id)).toEqual(['i-2', 'i-1']);
    expect(page.data[1]).toEqual({
      instance_id: 'i-1', hostname: 'worker-1', sdk_version: '0.1.0', transport: 'sse', applied_at: expect.any(String), connected: true,
      policy_version: 2, policy_sequence: 4, policy_hash: `sha256:${'a'.repeat(64)}`, kill_switch_active: true, last_seen_at: expect.any(String),
      closed_at: null,
    });
    const first = (await list('?limit=1')).json();
    expect(first).toMatchObject({ has_more: true, next_cursor: expect.any(String) });
    expect((await list(`?limit=1&cursor=${first.next_cursor}`)).json().data[0].instance_id).toBe('i-1');
  });

  it('shows an instance not heard from for 90 seconds as not connected', async () => {
    await post(report('stale-1'));
    ctx.clock.advance(91_000);
    try {
      const stale = (await list('?limit=200')).json().data.find((i: { instance_id: string }) => i.instance_id === 'stale-1');
      expect(stale.connected).toBe(false);
    } finally {
      ctx.clock.advance(-91_000);
    }
    const fresh = (await list('?limit=200')).json().data.find((i: { instance_id: string }) => i.instance_id === 'stale-1');
    expect(fresh.connected).toBe(true);
  });

  it('shows an instance that reported it was closing as not connected at once, until it reports again', async () => {
    const find = async (id: string) => (await list('?limit=200')).json().data.find((i: { instance_id: string }) => i.instance_id === id);
    await post(report('closing-1'));
    expect(await find('closing-1')).toMatchObject({ connected: true, closed_at: null });
    const closed = (await post(report('closing-1', { closed: true }))).json();
    expect(closed).toMatchObject({ connected: false, closed_at: new Date(ctx.clock.now()).toISOString(), policy_sequence: 3 });
    expect(await find('closing-1')).toMatchObject({ connected: false, closed_at: closed.closed_at });
    // The same instance id reporting again (a process that reopened) is connected again.
    await post(report('closing-1'));
    expect(await find('closing-1')).toMatchObject({ connected: true, closed_at: null });
  });

  it('forgets an instance silent for a week at the next retention run, and keeps the others', async () => {
    await post(report('gone-1'));
    ctx.clock.advance(7 * 86_400_000 - 60_000);
    try {
      await post(report('alive-1'));
      ctx.clock.advance(120_000);
      const ids = async () => (await list('?limit=200')).json().data.map((i: { instance_id: string }) => i.instance_id);
      expect(await ids()).toEqual(expect.arrayContaining(['gone-1', 'alive-1']));
      const result = await ctx.container.retention.runOnce();
      expect(result.instancesDeleted).toBeGreaterThanOrEqual(1);
      expect(await ids()).not.toContain('gone-1');
      expect(await ids()).toContain('alive-1');
    } finally {
      ctx.clock.advance(-(7 * 86_400_000 + 60_000));
    }
  });

  it('records an applied_at ahead of the service clock as the service time', async () => {
    const future = new Date(ctx.clock.now() + 3_600_000).toISOString();
    const res = (await post(report('future', { applied_at: future }))).json();
    expect(Date.parse(res.applied_at)).toBe(ctx.clock.now());
  });

  it('refuses bad reports with invalid_value and wrong credentials with 403', async () => {
    for (const bad of [report('bad id!'), report('x', { transport: 'carrier-pigeon' }), report('x', { policy_hash: 'md5:1' }), { instance_id: 'x' }, report('x', { extra: 1 }), report('x', { closed: 'yes' })]) {
      const res = await post(bad);
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('invalid_value');
    }
    const readOnly = (await ctx.createKey(owner.token, { kind: 'read_only' })).key;
    expect((await post(report('ro'), readOnly)).statusCode).toBe(403);
    expect((await ctx.request({ method: 'POST', url: `/v1/agents/${agentId}/instances`, token: owner.token, payload: report('jwt') })).statusCode).toBe(403);
    expect((await ctx.request({ method: 'GET', url: `/v1/agents/${agentId}/instances`, apiKey: readOnly })).statusCode).toBe(200);
    const unknown = await post(report('u'), sdkKey, '0190a000-0000-7000-8000-000000000000');
    expect(unknown.statusCode).toBe(404);
  });
});
