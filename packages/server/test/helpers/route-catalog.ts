import type { FastifyInstance, FastifySchema } from 'fastify';
import type { RouteModule } from '../../src/container.js';
import type { AuthRule } from '../../src/http/auth.js';

/**
 * Every route a host serves, found at run time, so walks over "every route" (tenant isolation,
 * fuzzing, scope and role matrices) cover routes added later without anyone editing a list.
 * `printRoutes` is the authority on what exists; an `onRoute` hook supplies each route's auth rule
 * and schemas.
 */
export interface RouteInfo {
  readonly host: 'api' | 'ingest';
  readonly method: string;
  readonly url: string;
  readonly auth: AuthRule | undefined;
  readonly schema: FastifySchema | undefined;
  /** False when a route exists but its options were never seen: walks must fail on it, not skip it. */
  readonly described: boolean;
}

export interface CollectedRoute {
  readonly method: string;
  readonly url: string;
  readonly auth: AuthRule | undefined;
  readonly schema: FastifySchema | undefined;
}

/** A route module that records the options of every route registered after it. */
export function collectRoutes(into: CollectedRoute[]): RouteModule {
  return async (app) => {
    app.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const method of methods) into.push({ method, url: route.url, auth: route.config?.auth, schema: route.schema });
    });
  };
}

// Registered by the app itself before any feature module, so the hook above never sees them.
const systemRoutes: Record<string, AuthRule> = {
  '/healthz': { public: true },
  '/metrics': { public: true },
  '/openapi.json': { public: true },
};

/** Reads `printRoutes` (a tree) back into full paths with their methods. */
export function parseRouteTree(tree: string): Array<{ method: string; url: string }> {
  const out: Array<{ method: string; url: string }> = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^((?:│ {3}| {4})*)(?:├── |└── )(\S+)(?: \(([^)]*)\))?/.exec(line);
    if (!match) continue;
    const depth = (match[1] ?? '').length / 4;
    stack.length = depth;
    stack.push(`${depth > 0 ? stack[depth - 1] : ''}${match[2]}`);
    const full = stack[depth] ?? '';
    for (const method of (match[3] ?? '').split(',').map((m) => m.trim()).filter(Boolean)) out.push({ method, url: full });
  }
  return out;
}

export function listRoutes(app: FastifyInstance, host: 'api' | 'ingest', collected: readonly CollectedRoute[]): RouteInfo[] {
  return parseRouteTree(app.printRoutes({ commonPrefix: false })).map(({ method, url }) => {
    const seen = collected.find((c) => c.method === method && c.url === url);
    if (seen) return { host, method, url, auth: seen.auth, schema: seen.schema, described: true };
    const system = systemRoutes[url];
    return { host, method, url, auth: system, schema: undefined, described: system !== undefined };
  });
}

/** Path parameter names, in order: `/v1/agents/:agent_id/policies/:version` → agent_id, version. */
export const pathParams = (url: string): string[] => [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1] ?? '');

export const routeName = (r: Pick<RouteInfo, 'host' | 'method' | 'url'>): string => `${r.method} ${r.url}${r.host === 'ingest' ? ' (ingest)' : ''}`;
