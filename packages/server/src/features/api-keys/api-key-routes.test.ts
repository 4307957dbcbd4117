import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../../../test/helpers/build-test-app.js';
import { testDialects } from '../../../test/helpers/test-databases.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
type KeyItem = { id: string; key_prefix: string; revoked_at: string | null; last_used_at: string | null; expires_at: string | null };
type KeyPage = { data: KeyItem[]; has_more: boolean; next_cursor: string | null };

describe.each(testDialects)('API keys on %s', (dialect) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
  });
  afterAll(() => ctx.close());

  const create = (token: string, payload: Record<string, unknown> = {}) =>
    ctx.request({ method: 'POST', url: '/v1/keys', token, payload: { name: 'ci', scope: { kind: 'all' }, ...payload } });
  const list = async (token: string, query = '') => (await ctx.request({ method: 'GET', url: `/v1/keys${query}`, token })).json<KeyPage>();
  const rowOf = (id: string) => ctx.testDb.db.kysely.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  const useKey = (apiKey: string) => ctx.request({ method: 'GET', url: '/v1/agents', apiKey });

  it('shows the full key once, with its prefix, and stores only its SHA-256', async () => {
    const { token, orgId } = await ctx.newOrg();
    const res = await create(token, { description: 'deploys', scope: { kind: 'restricted', resources: { agents: 'read' } } });
    expect(res.statusCode).toBe(200);
    const created = res.json();
    expect(created.key).toMatch(/^crl_live_[0-9A-Za-z]{40}$/);
    expect(created.key.startsWith(created.key_prefix)).toBe(true);
    expect(created.key_prefix).toMatch(/^crl_live_[0-9A-Za-z]{8}$/);
    expect(created).toMatchObject({ name: 'ci', environment: 'live', scope: { kind: 'restricted', resources: { agents: 'read' } }, expires_at: null });

    const row = await rowOf(created.id);
    expect(row?.key_hash).toBe(sha256(created.key));
    expect(Object.values(row ?? {}).some((v) => typeof v === 'string' && v.includes(created.key.slice(9)))).toBe(false);

    const listed = await ctx.request({ method: 'GET', url: '/v1/keys', token });
    expect(listed.body).not.toContain(created.key);
    expect(listed.json<KeyPage>().data[0]).toEqual({
      id: created.id, org_id: orgId, name: 'ci', description: 'deploys', key_prefix: created.key_prefix, environment: 'live',
      scope: { kind: 'restricted', resources: { agents: 'read' } }, last_used_at: null, expires_at: null, revoked_at: null,
      created_at: created.created_at,
    });
  });

  it('makes test keys with the crl_test_ prefix and every key different', async () => {
    const { token } = await ctx.newOrg();
    const a = (await create(token, { environment: 'test' })).json();
    const b = (await create(token, { environment: 'test' })).json();
    expect(a.key).toMatch(/^crl_test_[0-9A-Za-z]{40}$/);
    expect(a.environment).toBe('test');
    expect(a.key).not.toBe(b.key);
    expect((await useKey(a.key)).statusCode).toBe(200);
  });

  it('pages newest first by cursor, within the limits', async () => {
    const { token } = await ctx.newOrg();
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) ids.push((await create(token, { name: `key ${i}` })).json().id);
    const first = await list(token);
    expect(first.data).toHaveLength(20);
    expect(first.has_more).toBe(true);
    expect(first.data.map((k) => k.id)).toEqual([...ids].reverse().slice(0, 20));
    expect(first.next_cursor).toBe(first.data[19]?.id);
    const second = await list(token, `?cursor=${first.next_cursor}`);
    expect(second.data.map((k) => k.id)).toEqual([...ids].reverse().slice(20));
    expect(second).toMatchObject({ has_more: false, next_cursor: null });
    expect((await list(token, '?limit=100')).data).toHaveLength(25);
    expect((await list(token, '?limit=5')).data).toHaveLength(5);
    for (const query of ['?limit=0', '?limit=101', '?limit=-3', '?limit=many', '?cursor=nope', '?cursor=12345678-1234']) {
      const res = await ctx.request({ method: 'GET', url: `/v1/keys${query}`, token });
      expect(res.statusCode, query).toBe(400);
      expect(res.json().error.code, query).toBe('invalid_value');
    }
  });

  it('honours expiry at once, by the service clock', async () => {
    const { token } = await ctx.newOrg();
    const expiresAt = new Date(ctx.clock.now() + 3_600_000).toISOString();
    const created = (await create(token, { expires_at: expiresAt })).json();
    expect(created.expires_at).toBe(expiresAt);
    expect((await useKey(created.key)).statusCode).toBe(200);
    ctx.clock.advance(3_600_000);
    const expired = await useKey(created.key);
    expect(expired.statusCode).toBe(401);
    expect(expired.json().error.code).toBe('unauthorized');
    ctx.clock.advance(-3_600_000);
  });

  it('refuses expiry in the past, and reads a leap second as the next minute', async () => {
    const { token } = await ctx.newOrg();
    const past = await create(token, { expires_at: new Date(ctx.clock.now() - 1000).toISOString() });
    expect(past.statusCode).toBe(400);
    expect(past.json().error).toMatchObject({ code: 'invalid_value', details: [{ field: 'expires_at' }] });
    const leap = await create(token, { expires_at: '2100-06-30T23:59:60Z' });
    expect(leap.statusCode).toBe(200);
    expect(leap.json().expires_at).toBe('2100-07-01T00:00:00.000Z');
  });

  it('honours revocation at once and keeps the first revocation time', async () => {
    const { token } = await ctx.newOrg();
    const created = (await create(token)).json();
    expect((await useKey(created.key)).statusCode).toBe(200);
    expect((await ctx.request({ method: 'POST', url: `/v1/keys/${created.id}/revoke`, token })).json()).toEqual({ success: true });
    const refused = await useKey(created.key);
    expect(refused.statusCode).toBe(401);
    expect(refused.json().error.code).toBe('unauthorized');
    const revokedAt = (await list(token)).data[0]?.revoked_at;
    expect(revokedAt).toBe(new Date(ctx.clock.now()).toISOString());
    ctx.clock.advance(5000);
    expect((await ctx.request({ method: 'POST', url: `/v1/keys/${created.id}/revoke`, token })).statusCode).toBe(200);
    expect((await list(token)).data[0]?.revoked_at).toBe(revokedAt);
  });

  it('deletes a key only after revocation (409 api_key_not_revoked), removing the row', async () => {
    const { token } = await ctx.newOrg();
    const created = (await create(token)).json();
    const early = await ctx.request({ method: 'DELETE', url: `/v1/keys/${created.id}`, token });
    expect(early.statusCode).toBe(409);
    expect(early.json().error.code).toBe('api_key_not_revoked');
    expect((await useKey(created.key)).statusCode).toBe(200);
    await ctx.request({ method: 'POST', url: `/v1/keys/${created.id}/revoke`, token });
    expect((await ctx.request({ method: 'DELETE', url: `/v1/keys/${created.id}`, token })).json()).toEqual({ success: true });
    expect(await rowOf(created.id)).toBeUndefined();
    expect((await list(token)).data).toEqual([]);
    expect((await ctx.request({ method: 'DELETE', url: `/v1/keys/${created.id}`, token })).statusCode).toBe(404);
    expect((await ctx.request({ method: 'POST', url: `/v1/keys/${created.id}/revoke`, token })).statusCode).toBe(404);
  });

  it('keeps last_used_at to the minute without a write on every request', async () => {
    const { token } = await ctx.newOrg();
    const created = (await create(token)).json();
    const lastUsed = async () => (await rowOf(created.id))?.last_used_at ?? null;
    const settled = async (want: number) => {
      for (let i = 0; i < 200 && (await lastUsed()) !== want; i++) await new Promise((r) => setTimeout(r, 10));
      return lastUsed();
    };
    const t0 = ctx.clock.now();
    await useKey(created.key);
    expect(await settled(t0)).toBe(t0);
    ctx.clock.advance(30_000);
    for (let i = 0; i < 5; i++) await useKey(created.key);
    await new Promise((r) => setTimeout(r, 50));
    expect(await lastUsed()).toBe(t0);
    ctx.clock.advance(31_000);
    await useKey(created.key);
    expect(await settled(t0 + 61_000)).toBe(t0 + 61_000);
    expect((await list(token)).data[0]?.last_used_at).toBe(new Date(t0 + 61_000).toISOString());
  });

  it('refuses malformed and unknown keys with 401', async () => {
    for (const key of ['nope', 'crl_live_short', `crl_live_${'A'.repeat(40)}`, `crl_prod_${'A'.repeat(40)}`]) {
      const res = await useKey(key);
      expect(res.statusCode, key).toBe(401);
      expect(res.json().error.code).toBe('unauthorized');
    }
  });

  it('refuses bad create bodies with 400 invalid_value', async () => {
    const { token } = await ctx.newOrg();
    const bad = [
      { scope: { kind: 'all' } },
      { name: 'x', scope: { kind: 'superuser' } },
      { name: 'x', scope: { kind: 'restricted', resources: {} } },
      { name: 'x', scope: { kind: 'restricted', resources: { billing: 'read' } } },
      { name: 'x', scope: { kind: 'restricted', resources: { agents: 'admin' } } },
      { name: 'x', scope: { kind: 'all' }, environment: 'prod' },
      { name: 'x', scope: { kind: 'all' }, expires_at: 'tomorrow' },
      { name: '', scope: { kind: 'all' } },
      { name: 'x'.repeat(101), scope: { kind: 'all' } },
      { name: 'x', scope: { kind: 'all' }, key: 'crl_live_chosen' },
    ];
    for (const payload of bad) {
      const res = await ctx.request({ method: 'POST', url: '/v1/keys', token, payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().error.code).toBe('invalid_value');
    }
  });

  it('refuses API keys on every /v1/keys route, whatever their scope', async () => {
    const { token } = await ctx.newOrg();
    const key = (await create(token)).json();
    const routes = ctx.routes.api.filter((r) => r.url.startsWith('/v1/keys') && r.method !== 'HEAD');
    expect(routes.length).toBeGreaterThanOrEqual(4);
    for (const route of routes) {
      expect(route.auth?.key, route.url).toBeUndefined();
      const res = await ctx.request({ method: route.method, url: route.url.replace(':key_id', key.id), apiKey: key.key });
      expect(res.statusCode, `${route.method} ${route.url}`).toBe(403);
      expect(res.json().error.code).toBe('forbidden');
    }
    expect((await list(token)).data[0]?.revoked_at).toBeNull();
  });
});

describe.each(testDialects)('API key plan limits on %s', (dialect) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await buildTestContext(dialect, { plan: 'free' });
  });
  afterAll(() => ctx.close());

  const create = (token: string, extra: Record<string, unknown> = {}) =>
    ctx.request({ method: 'POST', url: '/v1/keys', token, payload: { name: 'k', scope: { kind: 'all' }, ...extra } });

  it('allows 2 keys on free, refuses the third with 403 plan_limit_exceeded, and frees a slot on revoke', async () => {
    const { token } = await ctx.newOrg();
    const first = (await create(token)).json();
    expect((await create(token)).statusCode).toBe(200);
    const third = await create(token);
    expect(third.statusCode).toBe(403);
    expect(third.json().error.code).toBe('plan_limit_exceeded');
    await ctx.request({ method: 'POST', url: `/v1/keys/${first.id}/revoke`, token });
    expect((await create(token)).statusCode).toBe(200);
    expect((await create(token)).statusCode).toBe(403);
  });

  it('holds the limit when creations race', async () => {
    const { token } = await ctx.newOrg();
    const results = await Promise.all(Array.from({ length: 6 }, () => create(token)));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(2);
    expect(results.filter((r) => r.statusCode === 403 && r.json().error.code === 'plan_limit_exceeded')).toHaveLength(4);
  });

  it('does not count expired keys', async () => {
    const { token } = await ctx.newOrg();
    await create(token, { expires_at: new Date(ctx.clock.now() + 1000).toISOString() });
    await create(token);
    expect((await create(token)).statusCode).toBe(403);
    ctx.clock.advance(1000);
    expect((await create(token)).statusCode).toBe(200);
  });

  it('follows the organization plan: 20 on team', async () => {
    const { token, orgId } = await ctx.newOrg();
    await create(token);
    await ctx.container.orgService.setPlan(orgId, 'team');
    for (let i = 1; i < 20; i++) expect((await create(token)).statusCode).toBe(200);
    expect((await create(token)).json().error.code).toBe('plan_limit_exceeded');
  });
});
