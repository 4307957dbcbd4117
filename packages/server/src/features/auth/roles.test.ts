import { type Role, roles } from '@corral/contracts';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../../../test/helpers/build-test-app.js';
import { routeName, type RouteInfo } from '../../../test/helpers/route-catalog.js';
import { send, walkableRoutes } from '../../../test/helpers/route-walk.js';
import { testDialects } from '../../../test/helpers/test-databases.js';

/** Minimum roles the interface (section 4) and contract (sections 2, 6) state, by route. */
const statedRoles: Record<string, Role> = {
  'POST /v1/keys': 'admin',
  'GET /v1/keys': 'viewer',
  'POST /v1/keys/:key_id/revoke': 'admin',
  'DELETE /v1/keys/:key_id': 'admin',
  'POST /v1/agents': 'member',
  'GET /v1/agents': 'viewer',
  'GET /v1/agents/:agent_id': 'viewer',
  'PUT /v1/agents/:agent_id': 'member',
  'DELETE /v1/agents/:agent_id': 'admin',
  'POST /v1/agents/:agent_id/kill-switch': 'admin',
  'GET /v1/audit-log': 'admin',
  'POST /v1/alerts': 'member',
  'GET /v1/alerts': 'viewer',
  'PUT /v1/alerts/:alert_id': 'member',
  'DELETE /v1/alerts/:alert_id': 'admin',
  'POST /v1/alerts/:alert_id/toggle': 'member',
  'POST /v1/alerts/:alert_id/mute': 'member',
  'POST /v1/alerts/:alert_id/unmute': 'member',
  'GET /v1/alerts/:alert_id/history': 'viewer',
  'GET /v1/alerts/:alert_id/notifications': 'viewer',
  'POST /v1/agents/:agent_id/policies': 'member',
  'GET /v1/agents/:agent_id/policies': 'viewer',
  'GET /v1/agents/:agent_id/policies/active': 'viewer',
  'GET /v1/agents/:agent_id/policies/:version': 'viewer',
  'POST /v1/agents/:agent_id/policies/:version/activate': 'member',
  'GET /v1/policy-keys': 'viewer',
  'POST /v1/auth/session': 'viewer',
  'DELETE /v1/auth/session': 'viewer',
};

/** Routes the interface does not list follow its pattern: reads viewer, deletes admin, other changes member. */
const expectedRole = (route: RouteInfo): Role =>
  statedRoles[`${route.method} ${route.url}`] ?? (route.method === 'GET' ? 'viewer' : route.method === 'DELETE' ? 'admin' : 'member');

describe.each(testDialects)('role hierarchy on %s', (dialect) => {
  let ctx: TestContext;
  let routes: RouteInfo[];
  const tokens = {} as Record<Role, string>;

  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
    routes = walkableRoutes(ctx).filter((r) => r.auth?.user);
    const orgId = randomUUID();
    for (const role of roles) tokens[role] = await ctx.token({ orgId, role, subject: `${role}-user` });
  });
  afterAll(() => ctx.close());

  it('knows the roles in order viewer < member < admin < owner', () => {
    expect([...roles]).toEqual(['viewer', 'member', 'admin', 'owner']);
  });

  it('requires the minimum role the interface states on every JWT route', () => {
    const wrong = routes
      .filter((r) => r.auth?.user !== expectedRole(r))
      .map((r) => `${routeName(r)}: needs ${r.auth?.user}, interface says ${expectedRole(r)}`);
    expect(wrong).toEqual([]);
    expect(routes.length).toBeGreaterThanOrEqual(11);
  });

  it('refuses every role below the minimum with 403 and admits every role at or above it', async () => {
    const wrong: string[] = [];
    for (const route of routes) {
      const minimum = route.auth?.user as Role;
      // Unknown ids and no body: an admitted call ends in 400 or 404 (or 200 for lists) and changes nothing.
      const url = route.url.replace(/:([A-Za-z0-9_]+)/g, () => randomUUID());
      for (const role of roles) {
        const res = await send(ctx, { method: route.method, url, host: route.host, token: tokens[role] });
        const refused = res.statusCode === 403 && res.json().error?.code === 'forbidden';
        const shouldRefuse = roles.indexOf(role) < roles.indexOf(minimum);
        if (refused !== shouldRefuse || res.statusCode === 401 || res.statusCode >= 500) {
          wrong.push(`${routeName(route)} as ${role}: ${res.statusCode} ${res.body.slice(0, 120)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('lets a member create an agent but not delete it or pull its kill switch; an admin may', async () => {
    const created = await ctx.request({ method: 'POST', url: '/v1/agents', token: tokens.member, payload: { name: 'Team bot' } });
    expect(created.statusCode).toBe(200);
    const id = created.json().id;
    const kill = (token: string) => ctx.request({ method: 'POST', url: `/v1/agents/${id}/kill-switch`, token, payload: { active: true } });
    expect((await kill(tokens.member)).statusCode).toBe(403);
    expect((await ctx.request({ method: 'POST', url: '/v1/agents', token: tokens.viewer, payload: { name: 'x' } })).statusCode).toBe(403);
    expect((await kill(tokens.admin)).json().kill_switch_active).toBe(true);
    expect((await ctx.request({ method: 'DELETE', url: `/v1/agents/${id}`, token: tokens.member })).statusCode).toBe(403);
    expect((await ctx.request({ method: 'DELETE', url: `/v1/agents/${id}`, token: tokens.owner })).statusCode).toBe(200);
  });

  it('says which role is needed', async () => {
    const res = await ctx.request({ method: 'POST', url: '/v1/keys', token: tokens.member, payload: { name: 'k', scope: { kind: 'all' } } });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toMatchObject({ code: 'forbidden', message: expect.stringContaining('admin') });
  });
});
