import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../../../test/helpers/build-test-app.js';
import { testDialects } from '../../../test/helpers/test-databases.js';

describe.each(testDialects)('cookie session on %s', (dialect) => {
  let ctx: TestContext;
  let owner: { orgId: string; token: string };
  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
    owner = await ctx.newOrg();
  });
  afterAll(() => ctx.close());

  async function startSession(token = owner.token) {
    const res = await ctx.request({ method: 'POST', url: '/v1/auth/session', token });
    expect(res.statusCode).toBe(200);
    const setCookie = String(res.headers['set-cookie']);
    return { res, setCookie, cookie: setCookie.split(';')[0] ?? '', csrf: res.json<{ csrf_token: string }>().csrf_token };
  }

  it('sets an HttpOnly, SameSite=Lax cookie that lives as long as the token', async () => {
    // Tokens are signed by the wall clock; the context's clock stopped when it was built, which
    // on a loaded machine can be seconds ago, and would add those seconds to the Max-Age.
    ctx.clock.set(Date.now());
    const { res, setCookie, cookie } = await startSession();
    expect(cookie.startsWith('corral_session=')).toBe(true);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).toMatch(/Path=\//);
    const maxAge = Number(/Max-Age=(\d+)/i.exec(setCookie)?.[1]);
    expect(maxAge).toBeGreaterThan(3500);
    expect(maxAge).toBeLessThanOrEqual(3600);
    expect(res.json()).toMatchObject({ org_id: owner.orgId, role: 'owner', subject: 'user-1' });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('needs a Bearer JWT to start, not an API key or nothing', async () => {
    expect((await ctx.request({ method: 'POST', url: '/v1/auth/session' })).statusCode).toBe(401);
    const key = await ctx.createKey(owner.token);
    expect((await ctx.request({ method: 'POST', url: '/v1/auth/session', apiKey: key.key })).statusCode).toBe(403);
  });

  it('authorizes reads by cookie and tells the page its CSRF token again', async () => {
    const { cookie, csrf } = await startSession();
    const info = await ctx.request({ method: 'GET', url: '/v1/auth/session', headers: { cookie } });
    expect(info.statusCode).toBe(200);
    expect(info.json()).toMatchObject({ org_id: owner.orgId, csrf_token: csrf });
    expect((await ctx.request({ method: 'GET', url: '/v1/agents', headers: { cookie } })).statusCode).toBe(200);
  });

  it('refuses a cookie-authorized change without the right CSRF token', async () => {
    const { cookie, csrf } = await startSession();
    const create = (headers: Record<string, string>) => ctx.request({ method: 'POST', url: '/v1/agents', headers: { cookie, ...headers }, payload: { name: 'Cookie Bot' } });
    const missing = await create({});
    expect(missing.statusCode).toBe(403);
    expect(missing.json().error.message).toContain('x-csrf-token');
    expect((await create({ 'x-csrf-token': `${csrf.slice(0, -1)}x` })).statusCode).toBe(403);
    const other = await startSession(await ctx.token({ orgId: owner.orgId, subject: 'user-2' }));
    expect((await create({ 'x-csrf-token': other.csrf })).statusCode).toBe(403);
    const ok = await create({ 'x-csrf-token': csrf });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().org_id).toBe(owner.orgId);
  });

  it('keeps the role of the token behind the cookie', async () => {
    const viewer = await startSession(await ctx.token({ orgId: owner.orgId, role: 'viewer' }));
    const res = await ctx.request({ method: 'POST', url: '/v1/agents', headers: { cookie: viewer.cookie, 'x-csrf-token': viewer.csrf }, payload: { name: 'x' } });
    expect(res.statusCode).toBe(403);
  });

  it('refuses a forged cookie, and never accepts a cookie where only API keys are', async () => {
    const forged = `corral_session=${owner.token.slice(0, -2)}xx`;
    expect((await ctx.request({ method: 'GET', url: '/v1/agents', headers: { cookie: forged } })).statusCode).toBe(401);
    const { cookie } = await startSession();
    const agentId = (await ctx.request({ method: 'POST', url: '/v1/agents', token: owner.token, payload: { name: 'y' } })).json().id;
    expect((await ctx.request({ method: 'GET', url: `/v1/agents/${agentId}/control/state`, headers: { cookie } })).statusCode).toBe(401);
  });

  it('ends the session by clearing the cookie', async () => {
    const res = await ctx.request({ method: 'DELETE', url: '/v1/auth/session' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true });
    const setCookie = String(res.headers['set-cookie']);
    expect(setCookie).toMatch(/^corral_session=;/);
    expect(setCookie).toMatch(/Expires=Thu, 01 Jan 1970/i);
  });
});
