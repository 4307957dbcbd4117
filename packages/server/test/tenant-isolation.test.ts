import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from './helpers/build-test-app.js';
import { pathParams, routeName, type RouteInfo } from './helpers/route-catalog.js';
import {
  createOrgFixture, credentialKinds, credentialsOf, fillPath, type OrgFixture, queryString, send, validBody, validQuery, walkableRoutes,
} from './helpers/route-walk.js';
import { testDialects } from './helpers/test-databases.js';

/**
 * Organization B calls every route the service registers, on organization A's ids, with each
 * credential the route accepts. Routes are enumerated at run time, so a route added later is
 * walked without editing this file, and one whose path names a resource nobody can create here
 * fails the walk by name.
 */
describe.each(testDialects)('tenant isolation on %s', (dialect) => {
  let ctx: TestContext;
  let a: OrgFixture;
  let b: OrgFixture;
  let routes: RouteInfo[];
  let auditOfA: string;
  const readAuditOfA = async () => (await ctx.request({ method: 'GET', url: '/v1/audit-log?limit=200', token: a.token })).body;

  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
    routes = walkableRoutes(ctx);
    a = await createOrgFixture(ctx, routes, 'org-a');
    b = await createOrgFixture(ctx, routes, 'org-b');
    auditOfA = await readAuditOfA();
  });
  afterAll(() => ctx.close());

  /** A's ids and names must not appear in anything B is shown. */
  const leaksA = (text: string) => [a.orgId, a.marker, ...Object.values(a.ids).filter((id) => id.length > 8)].filter((s) => text.includes(s));

  it('finds the routes of both hosts and knows every one', () => {
    expect(routes.some((r) => r.url === '/v1/agents/:agent_id')).toBe(true);
    expect(ctx.routes.ingest.some((r) => r.url === '/healthz')).toBe(true);
    expect(routes.filter((r) => !r.described).map(routeName)).toEqual([]);
  });

  it("gives B a 404 or a non-leaking answer on every route with A's ids", async () => {
    const failures: string[] = [];
    const exercised = new Set<string>();
    for (const route of routes) {
      const kinds: Array<'user' | 'key' | 'none'> = route.auth?.public ? ['none'] : credentialKinds(route);
      if (kinds.length === 0) failures.push(`${routeName(route)}: no credential can call it`);
      for (const kind of kinds) {
        const name = `${routeName(route)} as ${kind}`;
        let url: string;
        let payload: unknown;
        try {
          url = fillPath(route.url, a.ids) + queryString(validQuery(route, a.ids));
          payload = validBody(route, a.ids);
        } catch (err) {
          failures.push(`${name}: ${(err as Error).message}`);
          continue;
        }
        const res = await send(ctx, {
          method: route.method, url, host: route.host, ...(kind === 'none' ? {} : credentialsOf(b, kind)),
          ...(payload === undefined ? {} : { payload: payload as object }),
        });
        exercised.add(routeName(route));
        const namesA = pathParams(route.url).length > 0 || JSON.stringify(payload ?? {}).includes(a.ids.agent_id ?? '-');
        if (pathParams(route.url).length > 0) {
          if (res.statusCode !== 404 || res.json().error?.code !== 'not_found') failures.push(`${name}: ${res.statusCode} ${res.body.slice(0, 200)}`);
        } else if (res.statusCode >= 500 || (namesA && res.statusCode < 400)) {
          failures.push(`${name}: ${res.statusCode} ${res.body.slice(0, 200)}`);
        } else if (res.statusCode < 300 && leaksA(res.body).length > 0) {
          failures.push(`${name}: answer shows A's ${leaksA(res.body).join(', ')}`);
        }
      }
    }
    expect(failures).toEqual([]);
    const unexercised = routes.filter((r) => pathParams(r.url).length > 0 && !exercised.has(routeName(r)));
    expect(unexercised.map(routeName)).toEqual([]);
  });

  it("leaves A's resources as they were", async () => {
    const agent = await ctx.request({ method: 'GET', url: `/v1/agents/${a.ids.agent_id}`, token: a.token });
    expect(agent.statusCode).toBe(200);
    expect(agent.json()).toMatchObject({ kill_switch_active: false, public_key: null, name: `${a.marker} agent` });
    const keys = (await ctx.request({ method: 'GET', url: '/v1/keys', token: a.token })).json<{ data: Array<{ revoked_at: unknown }> }>();
    expect(keys.data.length).toBeGreaterThanOrEqual(2);
    expect(keys.data.every((k) => k.revoked_at === null)).toBe(true);
    expect(await readAuditOfA()).toBe(auditOfA);
  });

  it("shows B none of A's items in lists, and A's ids in filters find nothing", async () => {
    for (const url of ['/v1/agents', '/v1/keys', '/v1/audit-log', `/v1/audit-log?target_id=${a.ids.agent_id}`]) {
      const res = await ctx.request({ method: 'GET', url, token: b.token });
      expect(res.statusCode, url).toBe(200);
      expect(leaksA(res.body), url).toEqual([]);
    }
    const filtered = await ctx.request({ method: 'GET', url: `/v1/audit-log?target_id=${a.ids.agent_id}`, token: b.token });
    expect(filtered.json()).toEqual({ data: [], has_more: false, next_cursor: null });
  });

  it("refuses A's ids as B's cursors without revealing A's items", async () => {
    const res = await ctx.request({ method: 'GET', url: `/v1/agents?cursor=${a.ids.agent_id}`, token: b.token });
    expect(res.statusCode).toBe(200);
    expect(leaksA(res.body)).toEqual([]);
  });

  it("refuses B's API key on A's agent for key-only routes", async () => {
    const res = await ctx.request({
      method: 'POST', url: `/v1/agents/${a.ids.agent_id}/public-key`, apiKey: b.apiKey, payload: { public_key: 'ab'.repeat(32) },
    });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: { code: 'not_found' } });
  });
});
