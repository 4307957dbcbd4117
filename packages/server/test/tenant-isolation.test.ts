import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from './helpers/build-test-app.js';
import { routeName, type RouteInfo } from './helpers/route-catalog.js';
import { crossOrganizationFailures } from './helpers/isolation-walk.js';
import { createOrgFixture, type OrgFixture, walkableRoutes } from './helpers/route-walk.js';
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
    expect(await crossOrganizationFailures(ctx, routes, a, b)).toEqual([]);
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

/**
 * The gate itself: a route added later (by any feature) that forgets the organization, or names
 * a resource the walk cannot create, fails it. Two such routes are registered here, beside the
 * real ones, through the same route table the service builds.
 */
describe('the tenant-isolation gate', () => {
  it('fails a route that answers with another organization\'s resource, and one it cannot cover', async () => {
    const ctx = await buildTestContext('sqlite', {
      extraApiRoutes: [async (app) => {
        // Reads the agent by id alone, ignoring the caller's organization.
        app.get('/v1/agents/:agent_id/leak', { config: { auth: { user: 'viewer' } } }, async (request) => {
          const { agent_id: id } = request.params as { agent_id: string };
          const row = await ctx.container.db.kysely.selectFrom('agents').select(['id', 'name']).where('id', '=', id).executeTakeFirst();
          return row ?? {};
        });
        // Names a resource no fixture creates.
        app.get('/v1/widgets/:widget_id', { config: { auth: { user: 'viewer' } } }, async () => ({}));
      }],
    });
    try {
      const routes = walkableRoutes(ctx);
      // Fixtures for every resource the real routes name (the widget has none: that is the point).
      const known = routes.filter((r) => !r.url.startsWith('/v1/widgets'));
      const a = await createOrgFixture(ctx, known, 'gate-a');
      const b = await createOrgFixture(ctx, known, 'gate-b');
      const failures = await crossOrganizationFailures(ctx, routes, a, b);
      expect(failures).toEqual([
        expect.stringMatching(/^GET \/v1\/agents\/:agent_id\/leak as user: 200 /),
        expect.stringMatching(/^GET \/v1\/widgets\/:widget_id as user: No value for :widget_id/),
        'GET /v1/widgets/:widget_id: not covered by a cross-organization call',
      ]);
    } finally {
      await ctx.close();
    }
  });
});
