import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../../../test/helpers/build-test-app.js';
import { testDialects } from '../../../test/helpers/test-databases.js';

describe.each(testDialects)('agents on %s', (dialect) => {
  let ctx: TestContext;
  let owner: { orgId: string; token: string };
  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
    owner = await ctx.newOrg();
  });
  afterAll(() => ctx.close());

  const create = (name: string, token = owner.token, extra: Record<string, unknown> = {}) =>
    ctx.request({ method: 'POST', url: '/v1/agents', token, payload: { name, ...extra } });

  it('creates an agent with every field and no active_policy_mode', async () => {
    const res = await create('Billing Bot', owner.token, { description: 'pays invoices' });
    expect(res.statusCode).toBe(200);
    const agent = res.json();
    expect(agent).toMatchObject({
      org_id: owner.orgId, name: 'Billing Bot', slug: 'billing-bot', description: 'pays invoices',
      status: 'active', public_key: null, kill_switch_active: false,
    });
    expect(agent).not.toHaveProperty('active_policy_mode');
    expect(Date.parse(agent.created_at)).not.toBeNaN();
    const got = await ctx.request({ method: 'GET', url: `/v1/agents/${agent.id}`, token: owner.token });
    expect(got.json()).toMatchObject({ id: agent.id, active_policy_mode: null });
  });

  it('keeps slugs unique per organization, also after a soft delete', async () => {
    const { token } = await ctx.newOrg();
    const a = (await create('Same Name', token)).json();
    const b = (await create('Same Name', token)).json();
    expect([a.slug, b.slug]).toEqual(['same-name', 'same-name-2']);
    await ctx.request({ method: 'DELETE', url: `/v1/agents/${a.id}`, token });
    expect((await create('Same Name', token)).json().slug).toBe('same-name-3');
    const other = await ctx.newOrg();
    expect((await create('Same Name', other.token)).json().slug).toBe('same-name');
  });

  it('makes URL-safe slugs, also for creations that race', async () => {
    const { token } = await ctx.newOrg();
    expect((await create('Café Bot: v2!', token)).json().slug).toBe('cafe-bot-v2');
    expect((await create('!!!', token)).json().slug).toBe('agent');
    const raced = await Promise.all(Array.from({ length: 6 }, () => create('Racer', token)));
    expect(raced.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(new Set(raced.map((r) => r.json().slug)).size).toBe(6);
  });

  it('lists items with their fields and reads one agent with every field', async () => {
    const { token, orgId } = await ctx.newOrg();
    const created = (await create('Lister', token, { description: 'lists' })).json();
    const page = (await ctx.request({ method: 'GET', url: '/v1/agents', token })).json();
    expect(page).toEqual({
      data: [{ ...created, active_policy_mode: null }],
      has_more: false,
      next_cursor: null,
    });
    const got = (await ctx.request({ method: 'GET', url: `/v1/agents/${created.id}`, token })).json();
    expect(Object.keys(got).sort()).toEqual(
      ['active_policy_mode', 'created_at', 'description', 'id', 'kill_switch_active', 'name', 'org_id', 'public_key', 'slug', 'status'],
    );
    expect(got).toMatchObject({ org_id: orgId, description: 'lists', status: 'active' });
  });

  it('updates only the fields given, keeping the slug, and refuses bad updates', async () => {
    const { token } = await ctx.newOrg();
    const agent = (await create('Before', token, { description: 'old' })).json();
    const put = (payload: unknown, id = agent.id) => ctx.request({ method: 'PUT', url: `/v1/agents/${id}`, token, payload: payload as object });
    expect((await put({ name: 'After' })).json()).toMatchObject({ name: 'After', slug: 'before', description: 'old' });
    expect((await put({ description: null })).json()).toMatchObject({ name: 'After', description: null });
    expect((await put({ status: 'inactive' })).json()).toMatchObject({ name: 'After', status: 'inactive' });
    expect((await put({})).json()).toMatchObject({ name: 'After', status: 'inactive', description: null });
    for (const bad of [{ name: '' }, { name: '   ' }, { name: 7 }, { status: 'paused' }, { slug: 'mine' }, { name: 'x'.repeat(101) }]) {
      const res = await put(bad);
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(res.json().error.code).toBe('invalid_value');
    }
    expect((await put({ name: 'Ghost' }, '0190a1b2-0000-7000-8000-000000000000')).statusCode).toBe(404);
  });

  it('soft-deletes: gone from every read and write, the row kept', async () => {
    const { token, orgId } = await ctx.newOrg();
    const agent = (await create('Doomed', token)).json();
    const key = await ctx.createKey(token);
    expect((await ctx.request({ method: 'DELETE', url: `/v1/agents/${agent.id}`, token })).json()).toEqual({ success: true });
    const after = [
      ctx.request({ method: 'GET', url: `/v1/agents/${agent.id}`, token }),
      ctx.request({ method: 'PUT', url: `/v1/agents/${agent.id}`, token, payload: { name: 'x' } }),
      ctx.request({ method: 'DELETE', url: `/v1/agents/${agent.id}`, token }),
      ctx.request({ method: 'POST', url: `/v1/agents/${agent.id}/kill-switch`, token, payload: { active: true } }),
      ctx.request({ method: 'POST', url: `/v1/agents/${agent.id}/public-key`, apiKey: key.key, payload: { public_key: 'ab'.repeat(32) } }),
    ];
    for (const res of await Promise.all(after)) expect(res.statusCode).toBe(404);
    expect((await ctx.request({ method: 'GET', url: '/v1/agents', token })).json().data).toEqual([]);
    const row = await ctx.testDb.db.kysely.selectFrom('agents').selectAll().where('org_id', '=', orgId).where('id', '=', agent.id).executeTakeFirst();
    expect(row).toMatchObject({ name: 'Doomed', deleted_at: ctx.clock.now() });
  });

  it('pages newest first; the cursor is the last UUID of the page', async () => {
    const { token } = await ctx.newOrg();
    const ids: string[] = [];
    for (let i = 0; i < 23; i++) ids.push((await create(`Pager ${i}`, token)).json().id);
    const newestFirst = [...ids].reverse();
    const first = (await ctx.request({ method: 'GET', url: '/v1/agents?limit=10', token })).json();
    expect(first.data.map((a: { id: string }) => a.id)).toEqual(newestFirst.slice(0, 10));
    expect(first).toMatchObject({ has_more: true, next_cursor: newestFirst[9] });
    const second = (await ctx.request({ method: 'GET', url: `/v1/agents?limit=10&cursor=${first.next_cursor}`, token })).json();
    expect(second.data.map((a: { id: string }) => a.id)).toEqual(newestFirst.slice(10, 20));
    const third = (await ctx.request({ method: 'GET', url: `/v1/agents?limit=10&cursor=${second.next_cursor}`, token })).json();
    expect(third).toMatchObject({ has_more: false, next_cursor: null });
    expect(third.data).toHaveLength(3);
    expect((await ctx.request({ method: 'GET', url: '/v1/agents', token })).json().data).toHaveLength(20);
    for (const query of ['cursor=abc', 'cursor=0190a1b2-0000', 'limit=101', 'limit=0', 'limit=x']) {
      const res = await ctx.request({ method: 'GET', url: `/v1/agents?${query}`, token });
      expect(res.statusCode, query).toBe(400);
      expect(res.json().error.code, query).toBe('invalid_value');
    }
  });

  it('engages and releases the kill switch, auditing who, when and why', async () => {
    const { token } = await ctx.newOrg();
    const agent = (await create('Runaway', token)).json();
    const kill = (payload: unknown) => ctx.request({ method: 'POST', url: `/v1/agents/${agent.id}/kill-switch`, token, payload: payload as object });
    const engaged = await kill({ active: true, reason: 'incident 42: runaway spend' });
    expect(engaged.statusCode).toBe(200);
    expect(engaged.json()).toMatchObject({ id: agent.id, kill_switch_active: true });
    expect((await ctx.request({ method: 'GET', url: `/v1/agents/${agent.id}`, token })).json().kill_switch_active).toBe(true);
    expect((await kill({ active: false })).json().kill_switch_active).toBe(false);
    const audit = (await ctx.request({ method: 'GET', url: `/v1/audit-log?action=agent.kill_switch&target_id=${agent.id}`, token })).json();
    expect(audit.data).toEqual([
      expect.objectContaining({ actor_type: 'user', actor_id: 'user-1', reason: null, details: { active: false, previous: true } }),
      expect.objectContaining({
        actor_type: 'user', actor_id: 'user-1', target_type: 'agent', reason: 'incident 42: runaway spend',
        details: { active: true, previous: false }, created_at: new Date(ctx.clock.now()).toISOString(),
      }),
    ]);
    for (const bad of [{}, { active: 'true' }, { active: true, reason: 'x'.repeat(1001) }, { active: true, why: 'x' }]) {
      expect((await kill(bad)).statusCode, JSON.stringify(bad)).toBe(400);
    }
  });

  it('registers a public key once: same key again is a no-op, a different one 409', async () => {
    const { token } = await ctx.newOrg();
    const agent = (await create('Signer', token)).json();
    const { key } = await ctx.createKey(token);
    const register = (publicKey: unknown) =>
      ctx.request({ method: 'POST', url: `/v1/agents/${agent.id}/public-key`, apiKey: key, payload: { public_key: publicKey } });
    const hex = 'a1'.repeat(32);
    expect((await register(hex)).json()).toEqual({ registered: true, public_key: hex });
    expect((await register(hex)).json()).toEqual({ registered: false, public_key: hex });
    expect((await register(hex.toUpperCase())).json()).toEqual({ registered: false, public_key: hex });
    const other = await register('b2'.repeat(32));
    expect(other.statusCode).toBe(409);
    expect(other.json().error.code).toBe('conflict');
    expect((await ctx.request({ method: 'GET', url: `/v1/agents/${agent.id}`, token })).json().public_key).toBe(hex);
    for (const bad of ['a1'.repeat(31), 'a1'.repeat(33), 'zz'.repeat(32), `${'a1'.repeat(31)}a`, 42, null]) {
      const res = await register(bad);
      expect(res.statusCode, String(bad)).toBe(400);
      expect(res.json().error.code).toBe('invalid_value');
    }
    const audit = (await ctx.request({ method: 'GET', url: '/v1/audit-log?action=agent.public_key.register', token })).json();
    expect(audit.data).toHaveLength(1);
    expect(audit.data[0]).toMatchObject({ actor_type: 'api_key', target_id: agent.id, details: { public_key: hex } });
  });
});

describe.each(testDialects)('agent plan limits on %s', (dialect) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await buildTestContext(dialect, { plan: 'free' });
  });
  afterAll(() => ctx.close());

  it('allows 5 agents on free, refuses the sixth with 403 plan_limit_exceeded; deleted agents do not count', async () => {
    const { token } = await ctx.newOrg();
    const create = (name: string) => ctx.request({ method: 'POST', url: '/v1/agents', token, payload: { name } });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create(`a${i}`)).json().id);
    const sixth = await create('a5');
    expect(sixth.statusCode).toBe(403);
    expect(sixth.json()).toMatchObject({ error: { code: 'plan_limit_exceeded', message: expect.stringMatching(/free/) } });
    await ctx.request({ method: 'DELETE', url: `/v1/agents/${ids[0]}`, token });
    expect((await create('a6')).statusCode).toBe(200);
    expect((await create('a7')).statusCode).toBe(403);
  });

  it('holds the limit when creations race', async () => {
    const { token } = await ctx.newOrg();
    const results = await Promise.all(
      Array.from({ length: 9 }, (_, i) => ctx.request({ method: 'POST', url: '/v1/agents', token, payload: { name: `race ${i}` } })),
    );
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(5);
    expect(results.filter((r) => r.statusCode === 403 && r.json().error.code === 'plan_limit_exceeded')).toHaveLength(4);
  });

  it('follows a plan change: 50 on team', async () => {
    const { token, orgId } = await ctx.newOrg();
    await ctx.request({ method: 'GET', url: '/v1/agents', token });
    await ctx.container.orgService.setPlan(orgId, 'team');
    const results = [];
    for (let i = 0; i < 51; i++) results.push((await ctx.request({ method: 'POST', url: '/v1/agents', token, payload: { name: `t${i}` } })).statusCode);
    expect(results.filter((s) => s === 200)).toHaveLength(50);
    expect(results[50]).toBe(403);
  });
});
