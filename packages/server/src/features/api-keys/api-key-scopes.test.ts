import { type ApiKeyScope, scopeResources } from '@corral/contracts';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../../../test/helpers/build-test-app.js';
import { routeName, type RouteInfo } from '../../../test/helpers/route-catalog.js';
import { send, walkableRoutes } from '../../../test/helpers/route-walk.js';
import { testDialects } from '../../../test/helpers/test-databases.js';

type KeyRule = { resource: string; access: 'read' | 'write' } | 'any' | undefined;

/**
 * What contract section 2 says each path takes from an API key. Routes come from the running app,
 * so a new route that is not placed here fails by name instead of going unchecked.
 */
function contractKeyRule(route: RouteInfo): KeyRule | 'unknown' {
  const { url, method } = route;
  const access = method === 'GET' ? 'read' : 'write';
  if (url.startsWith('/v1/keys')) return undefined; // keys are managed by people only
  if (url === '/v1/audit-log') return undefined; // an admin's JWT: no key resource covers it
  if (url.startsWith('/v1/auth/')) return undefined; // cookie sessions are made from JWTs
  if (url.endsWith('/control/dashboard-stream')) return undefined; // the dashboard's cookie session
  // The kill switch and agent deletion are for people only, whatever the key's scope.
  if (url === '/v1/agents/:agent_id/kill-switch' || (url === '/v1/agents/:agent_id' && method === 'DELETE')) return undefined;
  if (url === '/v1/policy-keys') return 'any';
  if (/^\/v1\/agents\/:agent_id\/policies/.test(url)) return { resource: 'policies', access };
  // An SDK process reporting what it applied is telemetry about itself (docs/api.md, "SDK instances").
  if (url === '/v1/agents/:agent_id/instances' && method === 'POST') return { resource: 'events', access: 'write' };
  if (url.startsWith('/v1/agents')) return { resource: 'agents', access };
  if (url === '/v1/telemetry' || url === '/v1/traces') return { resource: 'events', access: 'write' };
  if (url.startsWith('/v1/dashboard')) return { resource: 'events', access: 'read' };
  if (url.startsWith('/v1/alerts')) return { resource: 'alerts', access };
  return 'unknown';
}

/** The scope rules of contract section 2, written out independently of domain/principal.ts. */
function expectAllowed(scope: ApiKeyScope, rule: Exclude<KeyRule, undefined>): boolean {
  if (rule === 'any' || scope.kind === 'all') return true;
  if (scope.kind === 'read_only') return rule.access === 'read';
  const granted = (scope.resources as Record<string, string | undefined>)[rule.resource];
  return granted === 'write' || (granted === 'read' && rule.access === 'read');
}

const scopes: ApiKeyScope[] = [
  { kind: 'all' },
  { kind: 'read_only' },
  ...scopeResources.flatMap((resource) =>
    (['read', 'write'] as const).map((level) => ({ kind: 'restricted' as const, resources: { [resource]: level } })),
  ),
  { kind: 'restricted', resources: { agents: 'write', events: 'read' } },
];

describe.each(testDialects)('API key scopes on %s', (dialect) => {
  let ctx: TestContext;
  let owner: { orgId: string; token: string };
  let keys: Array<{ scope: ApiKeyScope; key: string }>;
  let routes: RouteInfo[];

  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
    owner = await ctx.newOrg();
    routes = walkableRoutes(ctx).filter((r) => !r.auth?.public);
    keys = [];
    for (const scope of scopes) keys.push({ scope, key: (await ctx.createKey(owner.token, scope)).key });
  });
  afterAll(() => ctx.close());

  it('gives every route the key rule the contract names for its path', () => {
    const mismatches = routes.flatMap((route) => {
      const want = contractKeyRule(route);
      if (want === 'unknown') return [`${routeName(route)}: not placed in contract section 2's resources; add it here`];
      return JSON.stringify(want) === JSON.stringify(route.auth?.key) ? [] : [`${routeName(route)}: key rule ${JSON.stringify(route.auth?.key)}, contract says ${JSON.stringify(want)}`];
    });
    expect(mismatches).toEqual([]);
  });

  it('enforces all, read_only and restricted scopes per resource on every route that takes keys', async () => {
    const keyRoutes = routes.filter((r) => r.auth?.key);
    expect(keyRoutes.length).toBeGreaterThanOrEqual(7);
    const wrong: string[] = [];
    for (const route of keyRoutes) {
      // Unknown ids and no body: an allowed call ends in 400 or 404 and changes nothing.
      const url = route.url.replace(/:([A-Za-z0-9_]+)/g, () => randomUUID());
      for (const { scope, key } of keys) {
        const res = await send(ctx, { method: route.method, url, host: route.host, apiKey: key });
        const refused = res.statusCode === 403 && res.json().error?.code === 'forbidden';
        const allowed = expectAllowed(scope, route.auth?.key as Exclude<KeyRule, undefined>);
        if (res.statusCode === 401 || res.statusCode >= 500 || refused === allowed) {
          wrong.push(`${routeName(route)} with ${JSON.stringify(scope)}: ${res.statusCode} ${res.body.slice(0, 120)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('lets a read_only key GET every key route and mutate none', async () => {
    const readOnly = keys.find((k) => k.scope.kind === 'read_only')?.key ?? '';
    const agent = await ctx.request({ method: 'POST', url: '/v1/agents', apiKey: readOnly, payload: { name: 'nope' } });
    expect(agent.statusCode).toBe(403);
    expect(agent.json()).toMatchObject({ error: { code: 'forbidden', message: expect.stringMatching(/scope/) } });
    const listed = await ctx.request({ method: 'GET', url: '/v1/agents', apiKey: readOnly });
    expect(listed.statusCode).toBe(200);
  });

  it('carries out what a scope allows: a restricted agents:write key creates and renames an agent', async () => {
    const agentsWrite = keys.find((k) => k.scope.kind === 'restricted' && k.scope.resources.agents === 'write' && !k.scope.resources.events)?.key ?? '';
    const created = await ctx.request({ method: 'POST', url: '/v1/agents', apiKey: agentsWrite, payload: { name: 'by key' } });
    expect(created.statusCode).toBe(200);
    const renamed = await ctx.request({ method: 'PUT', url: `/v1/agents/${created.json().id}`, apiKey: agentsWrite, payload: { name: 'renamed' } });
    expect(renamed.json()).toMatchObject({ name: 'renamed', org_id: owner.orgId });
  });

  it("never lets an API key release its agent's kill switch or delete the agent, whatever its scope", async () => {
    const agent = await ctx.request({ method: 'POST', url: '/v1/agents', token: owner.token, payload: { name: 'runaway' } });
    const id = agent.json<{ id: string }>().id;
    const engaged = await ctx.request({ method: 'POST', url: `/v1/agents/${id}/kill-switch`, token: owner.token, payload: { active: true, reason: 'loop' } });
    expect(engaged.statusCode).toBe(200);
    for (const { scope, key } of keys) {
      const release = await ctx.request({ method: 'POST', url: `/v1/agents/${id}/kill-switch`, apiKey: key, payload: { active: false } });
      expect(release.statusCode, JSON.stringify(scope)).toBe(403);
      expect(release.json().error.code).toBe('forbidden');
      const deleted = await ctx.request({ method: 'DELETE', url: `/v1/agents/${id}`, apiKey: key });
      expect(deleted.statusCode, JSON.stringify(scope)).toBe(403);
    }
    const after = await ctx.request({ method: 'GET', url: `/v1/agents/${id}`, token: owner.token });
    expect(after.json()).toMatchObject({ kill_switch_active: true });
  });

  it('refuses keys on JWT-only routes and JWTs on key-only routes with 403', async () => {
    const all = keys[0]?.key ?? '';
    for (const route of routes.filter((r) => !r.auth?.key && r.auth?.user)) {
      const res = await send(ctx, { method: route.method, url: route.url.replace(/:([A-Za-z0-9_]+)/g, () => randomUUID()), host: route.host, apiKey: all });
      expect(res.statusCode, routeName(route)).toBe(403);
    }
    for (const route of routes.filter((r) => r.auth?.key && !r.auth?.user)) {
      const res = await send(ctx, { method: route.method, url: route.url.replace(/:([A-Za-z0-9_]+)/g, () => randomUUID()), host: route.host, token: owner.token });
      expect(res.statusCode, routeName(route)).toBe(403);
    }
  });
});
