import type { InjectOptions } from 'fastify';
import { randomBytes } from 'node:crypto';
import type { TestContext } from './build-test-app.js';
import { conforms, type JsonSchema, sampleOf } from './json-samples.js';
import { pathParams, type RouteInfo, routeName } from './route-catalog.js';

/**
 * What walks over every route need: an organization with one of each resource a path can name,
 * a valid request for any route, and a way to send it that survives streaming (SSE) routes.
 */
export interface OrgFixture {
  orgId: string;
  token: string;
  /** An all-scope key used as the organization's API-key credential. */
  apiKey: string;
  /** One existing resource per path parameter name (agent_id, key_id, …). */
  ids: Record<string, string>;
  /** Text carried by this organization's names, to spot it in another organization's answers. */
  marker: string;
}

export interface WalkResponse {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
  /** The route answered with an event stream; the walk read the headers and hung up. */
  streamed: boolean;
  json<T = { error?: { code?: string } }>(): T;
}

type RequestOptions = InjectOptions & { token?: string; apiKey?: string; host?: 'api' | 'ingest' };

/** `ctx.request`, but an event stream is answered by its headers instead of waiting forever. */
export async function send(ctx: TestContext, opts: RequestOptions): Promise<WalkResponse> {
  const abort = new AbortController();
  const res = await ctx.request({ ...opts, payloadAsStream: true, signal: abort.signal });
  const stream = res.stream();
  const streamed = String(res.headers['content-type'] ?? '').startsWith('text/event-stream');
  let body = '';
  if (streamed) {
    stream.on('error', () => undefined);
    abort.abort();
  } else {
    for await (const chunk of stream) body += String(chunk);
  }
  return { statusCode: res.statusCode, headers: res.headers, body, streamed, json: () => JSON.parse(body) };
}

const telemetryEvent = (agentId: string, requestId = `req-${randomBytes(6).toString('hex')}`) => ({
  agent_id: agentId,
  timestamp: new Date().toISOString(),
  request_id: requestId,
  method: 'GET',
  url_host: 'api.example.com',
  url_path: '/v1/items/{id}',
  status_code: 200,
  latency_ms: 12,
  policy_result: 'allowed',
});

/** Bodies with meaning beyond their schema (a policy document, an alert on a real agent). */
const knownBodies: Record<string, (ids: Record<string, string>) => unknown> = {
  'POST /v1/agents/:agent_id/policies': () => ({ policy: { mode: 'enforce', default: 'allow', rules: [] }, activate: false }),
  // A webhook rule, so that its secret can be rotated; the loopback target is refused at connect
  // time (CORRAL_WEBHOOK_ALLOW_PRIVATE is off), so a test send fails at once without any network.
  'POST /v1/alerts': (ids) => ({
    agent_id: ids.agent_id, condition_type: 'error_rate', threshold: 5, channel: 'webhook', channel_target: 'http://127.0.0.1:9/corral-hook',
  }),
  'POST /v1/telemetry': (ids) => ({ events: [telemetryEvent(ids.agent_id ?? '')] }),
  'POST /v1/traces': () => ({ resourceSpans: [] }),
};

const exists = (ctx: TestContext, method: string, url: string) =>
  [...ctx.routes.api, ...ctx.routes.ingest].some((r) => r.method === method && r.url === url);

async function ok<T>(label: string, res: { statusCode: number; body: string; json(): unknown }): Promise<T> {
  if (res.statusCode !== 200 && res.statusCode !== 201) throw new Error(`fixture ${label} failed: ${res.statusCode} ${res.body}`);
  return res.json() as T;
}

type Provider = (ctx: TestContext, org: OrgFixture) => Promise<string>;

/** How to make a resource for each path parameter; a parameter without one fails the walk by name. */
const providers: Record<string, { needs: [string, string]; make: Provider }> = {
  agent_id: {
    needs: ['POST', '/v1/agents'],
    make: async (ctx, org) =>
      (await ok<{ id: string }>('agent', await ctx.request({ method: 'POST', url: '/v1/agents', token: org.token, payload: { name: `${org.marker} agent` } }))).id,
  },
  key_id: {
    needs: ['POST', '/v1/keys'],
    make: async (ctx, org) =>
      (await ok<{ id: string }>('key', await ctx.request({ method: 'POST', url: '/v1/keys', token: org.token, payload: { name: `${org.marker} key`, scope: { kind: 'read_only' } } }))).id,
  },
  alert_id: {
    needs: ['POST', '/v1/alerts'],
    make: async (ctx, org) =>
      (await ok<{ id: string }>('alert', await ctx.request({ method: 'POST', url: '/v1/alerts', token: org.token, payload: knownBodies['POST /v1/alerts']?.(org.ids) as object }))).id,
  },
  version: {
    needs: ['POST', '/v1/agents/:agent_id/policies'],
    make: async (ctx, org) =>
      String((await ok<{ version: number }>('policy', await ctx.request({
        method: 'POST', url: `/v1/agents/${org.ids.agent_id}/policies`, token: org.token, payload: knownBodies['POST /v1/agents/:agent_id/policies']?.(org.ids) as object,
      }))).version),
  },
  request_id: {
    needs: ['POST', '/v1/telemetry'],
    make: async (ctx, org) => {
      const event = telemetryEvent(org.ids.agent_id ?? '');
      await ok('telemetry', await ctx.request({ method: 'POST', url: '/v1/telemetry', apiKey: org.apiKey, payload: { events: [event] } }));
      return event.request_id;
    },
  },
};

/** Every path parameter name the routes use. */
export const paramNames = (routes: readonly RouteInfo[]): Set<string> => new Set(routes.flatMap((r) => pathParams(r.url)));

/** A new organization holding one resource for every path parameter the routes use. */
export async function createOrgFixture(ctx: TestContext, routes: readonly RouteInfo[], label: string): Promise<OrgFixture> {
  const { orgId, token } = await ctx.newOrg();
  const marker = `${label}-${randomBytes(4).toString('hex')}`;
  const key = await ok<{ key: string }>('credential key', await ctx.request({
    method: 'POST', url: '/v1/keys', token, payload: { name: `${marker} credential`, scope: { kind: 'all' } },
  }));
  const org: OrgFixture = { orgId, token, apiKey: key.key, ids: {}, marker };
  // agent_id first: the other resources hang off an agent.
  const wanted = ['agent_id', ...[...paramNames(routes)].filter((p) => p !== 'agent_id')];
  for (const name of wanted) {
    const provider = providers[name];
    if (!provider) throw new Error(`No fixture for path parameter :${name}; add one to test/helpers/route-walk.ts`);
    if (!exists(ctx, ...provider.needs)) throw new Error(`Fixture for :${name} needs ${provider.needs.join(' ')}, which is not registered`);
    org.ids[name] = await provider.make(ctx, org);
  }
  return org;
}

export function fillPath(url: string, ids: Readonly<Record<string, string>>): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => {
    const id = ids[name];
    if (id === undefined) throw new Error(`No value for :${name} in ${url}`);
    return encodeURIComponent(id);
  });
}

export function queryString(values: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) {
    for (const item of Array.isArray(v) ? v : [v]) params.append(k, typeof item === 'string' ? item : JSON.stringify(item));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** A valid body for the route, or undefined when it takes none; throws when no valid one can be built. */
export function validBody(route: RouteInfo, ids: Readonly<Record<string, string>>): unknown {
  const known = knownBodies[`${route.method} ${route.url}`];
  const schema = route.schema?.body as JsonSchema | undefined;
  if (!schema) return known?.(ids);
  const body = known ? known(ids) : sampleOf(schema, { ids });
  if (!conforms(schema, body)) throw new Error(`Cannot build a valid body for ${routeName(route)}: add one to knownBodies in route-walk.ts`);
  return body;
}

/** The required query values, plus any *_id filters pointed at `ids`. */
export function validQuery(route: RouteInfo, ids: Readonly<Record<string, string>>): Record<string, unknown> {
  const schema = route.schema?.querystring as JsonSchema | undefined;
  if (!schema) return {};
  const value = sampleOf(schema, { ids }) as Record<string, unknown>;
  // Defaults are for the server to apply; sending them would hide a missing default.
  for (const [name, prop] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
    if (prop.default !== undefined && !(schema.required as string[] | undefined)?.includes(name)) delete value[name];
  }
  return value;
}

/** Which credentials a route takes: a user's JWT, an API key, or both. */
export function credentialKinds(route: RouteInfo): Array<'user' | 'key'> {
  return [...(route.auth?.user ? ['user' as const] : []), ...(route.auth?.key ? ['key' as const] : [])];
}

export function credentialsOf(org: Pick<OrgFixture, 'token' | 'apiKey'>, kind: 'user' | 'key'): { token?: string; apiKey?: string } {
  return kind === 'user' ? { token: org.token } : { apiKey: org.apiKey };
}

/** Routes the walks call: every method but HEAD (which repeats GET). */
export const walkableRoutes = (ctx: TestContext): RouteInfo[] => [...ctx.routes.api, ...ctx.routes.ingest].filter((r) => r.method !== 'HEAD');
