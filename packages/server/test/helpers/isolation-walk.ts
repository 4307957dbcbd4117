import type { TestContext } from './build-test-app.js';
import { pathParams, routeName, type RouteInfo } from './route-catalog.js';
import { credentialKinds, credentialsOf, fillPath, type OrgFixture, queryString, send, validBody, validQuery } from './route-walk.js';

/**
 * The tenant-isolation gate: organization B calls every route on organization A's ids, with each
 * credential the route accepts, and every route that names a resource must answer 404
 * not_found. Answers what failed, by route; a route nobody can call, or whose path names a
 * resource the fixtures cannot create, fails by name rather than being passed over.
 */
export async function crossOrganizationFailures(ctx: TestContext, routes: readonly RouteInfo[], a: OrgFixture, b: OrgFixture): Promise<string[]> {
  const failures: string[] = [];
  const exercised = new Set<string>();
  const leaksA = (text: string) => [a.orgId, a.marker, ...Object.values(a.ids).filter((id) => id.length > 8)].filter((s) => text.includes(s));
  for (const route of routes) {
    if (!route.described) failures.push(`${routeName(route)}: registered without a schema or auth rule the walk can read`);
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
  for (const route of routes) {
    if (pathParams(route.url).length > 0 && !exercised.has(routeName(route))) failures.push(`${routeName(route)}: not covered by a cross-organization call`);
  }
  return failures;
}
