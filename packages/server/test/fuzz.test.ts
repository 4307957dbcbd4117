import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from './helpers/build-test-app.js';
import { fuzzRequest, hostileStrings, isErrorBody, unboundedStrings, wrongValuesFor } from './helpers/fuzz-cases.js';
import { createRng, fieldsOf, type JsonSchema, withField } from './helpers/json-samples.js';
import { pathParams, routeName, type RouteInfo } from './helpers/route-catalog.js';
import {
  createOrgFixture, credentialKinds, credentialsOf, fillPath, type OrgFixture, queryString, send, validBody, validQuery, walkableRoutes,
  type WalkResponse,
} from './helpers/route-walk.js';
import { testDialects } from './helpers/test-databases.js';

/**
 * Random and deliberately broken requests to every route (enumerated at run time), with valid
 * credentials so they get past authentication. Nothing a client sends may produce a 5xx, and every
 * refusal carries the contract's error body. CORRAL_FUZZ_SEED replays a run; CORRAL_FUZZ_RUNS
 * changes how many requests each route gets.
 */
const SEED = Number(process.env.CORRAL_FUZZ_SEED ?? 20_250_601);
const RUNS = Number(process.env.CORRAL_FUZZ_RUNS ?? 200);

const hashOf = (text: string) => [...text].reduce((h, c) => (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0, 7);

describe.each(testDialects)('fuzzing every route on %s', (dialect) => {
  let ctx: TestContext;
  let org: OrgFixture;
  let routes: RouteInfo[];

  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
    // Deletions last, so the resources the other routes are fuzzed on still exist.
    routes = walkableRoutes(ctx).sort((x, y) => Number(x.method === 'DELETE') - Number(y.method === 'DELETE'));
    org = await createOrgFixture(ctx, routes, 'fuzz');
  });
  afterAll(() => ctx.close());

  /** Sends with the first credential the route takes (public routes get none). */
  const call = (route: RouteInfo, url: string, payload?: unknown, headers: Record<string, string> = {}, kind = credentialKinds(route)[0]) =>
    send(ctx, {
      method: route.method, url, host: route.host, headers, ...(kind ? credentialsOf(org, kind) : {}),
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const withValidIds = (route: RouteInfo) => fillPath(route.url, { ...Object.fromEntries(pathParams(route.url).map((p) => [p, randomUUID()])), ...org.ids });
  const describeFailure = (route: RouteInfo, what: string, res: WalkResponse) => `${routeName(route)} ${what}: ${res.statusCode} ${res.body.slice(0, 300)}`;

  it(`answers ${RUNS} random requests per route without a 5xx, every refusal in the contract's shape`, { timeout: 900_000 }, async () => {
    const failures: string[] = [];
    let sent = 0;
    // Its own organization: the random deletions below must not take the other checks' resources.
    const target = await createOrgFixture(ctx, routes, 'fuzz-random');
    for (const route of routes) {
      const rng = createRng(SEED ^ hashOf(routeName(route)));
      const kinds = credentialKinds(route);
      for (let i = 0; i < RUNS; i++) {
        const request = fuzzRequest(rng, route, target.ids);
        const kind = kinds.length > 0 ? kinds[i % kinds.length] : undefined;
        const res = await send(ctx, {
          method: route.method, url: request.url, host: route.host, headers: request.headers ?? {},
          ...(kind ? credentialsOf(target, kind) : {}), ...(request.payload === undefined ? {} : { payload: request.payload }),
        });
        sent++;
        const replay = `seed ${SEED} run ${i}: ${JSON.stringify(request).slice(0, 300)}`;
        if (res.statusCode >= 500) failures.push(describeFailure(route, replay, res));
        else if (res.statusCode >= 400 && !isErrorBody(res.body)) failures.push(describeFailure(route, `${replay} (error body not in contract shape)`, res));
      }
    }
    expect(failures.slice(0, 15)).toEqual([]);
    expect(sent).toBe(RUNS * routes.length);
  });

  it('stores or refuses hostile text in every string field and query value, never a 5xx', async () => {
    const failures: string[] = [];
    for (const route of routes.filter((r) => r.method !== 'DELETE')) {
      const body = route.schema?.body as JsonSchema | undefined;
      const query = route.schema?.querystring as JsonSchema | undefined;
      const strings = (schema: JsonSchema | undefined) => (schema ? fieldsOf(schema).filter((f) => JSON.stringify(f.schema).includes('"string"')) : []);
      for (const text of hostileStrings) {
        for (const { path } of strings(body)) {
          const res = await call(route, withValidIds(route), withField(validBody(route, org.ids), path, text));
          if (res.statusCode >= 500 || (res.statusCode >= 400 && !isErrorBody(res.body))) failures.push(describeFailure(route, `body ${path.join('.')}=${JSON.stringify(text)}`, res));
        }
        for (const { path } of strings(query)) {
          const url = withValidIds(route) + queryString({ ...validQuery(route, org.ids), [path.join('.')]: text });
          const res = await call(route, url);
          if (res.statusCode >= 500 || (res.statusCode >= 400 && !isErrorBody(res.body))) failures.push(describeFailure(route, `query ${path.join('.')}=${JSON.stringify(text)}`, res));
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('refuses text holding NUL with 400 invalid_value naming the field, alike on both engines', async () => {
    const body = await ctx.request({ method: 'POST', url: '/v1/agents', token: org.token, payload: { name: 'ok', description: 'a\u0000b' } });
    expect(body.statusCode).toBe(400);
    expect(body.json().error).toMatchObject({ code: 'invalid_value', details: [{ field: 'description', message: expect.stringMatching(/NUL/) }] });
    const query = await ctx.request({ method: 'GET', url: '/v1/audit-log?action=a%00b', token: org.token });
    expect(query.statusCode).toBe(400);
    expect(query.json().error).toMatchObject({ code: 'invalid_value', details: [{ field: 'querystring.action' }] });
  });

  it('answers malformed JSON with 400 invalid_json on every route that takes a body', async () => {
    const failures: string[] = [];
    const bodyRoutes = routes.filter((r) => r.schema?.body);
    expect(bodyRoutes.length).toBeGreaterThan(0);
    for (const route of bodyRoutes) {
      for (const text of ['{"name": ', '{name: 1}', '[1, 2', '{"a":1}}', 'undefined']) {
        const res = await call(route, withValidIds(route), text, { 'content-type': 'application/json' });
        if (res.statusCode !== 400 || res.json().error?.code !== 'invalid_json') failures.push(describeFailure(route, JSON.stringify(text), res));
      }
    }
    expect(failures).toEqual([]);
  });

  it('bounds the length of every string a body or query takes', () => {
    const unbounded = routes.flatMap((route) => [
      ...unboundedStrings((route.schema?.body ?? {}) as JsonSchema).map((f) => `${routeName(route)} body ${f}`),
      ...unboundedStrings((route.schema?.querystring ?? {}) as JsonSchema).map((f) => `${routeName(route)} query ${f}`),
    ]);
    expect(unbounded).toEqual([]);
  });

  it('answers over-long strings, wrong types, unknown enum values and unknown fields with 400 invalid_value', async () => {
    const failures: string[] = [];
    let checked = 0;
    for (const route of routes.filter((r) => r.schema?.body)) {
      const schema = route.schema?.body as JsonSchema;
      const valid = validBody(route, org.ids);
      const cases: Array<[string, unknown]> = [['unknown field', { ...(valid as object), zz_unknown_field: 1 }]];
      for (const { path, schema: field } of fieldsOf(schema)) {
        const at = path.join('.');
        if (typeof field.maxLength === 'number') cases.push([`over-long ${at}`, withField(valid, path, 'x'.repeat(field.maxLength + 1))]);
        for (const wrong of wrongValuesFor(field, 'body').slice(0, 3)) cases.push([`wrong type ${at}=${JSON.stringify(wrong)}`, withField(valid, path, wrong)]);
        const literal = Array.isArray(field.enum) || (Array.isArray(field.anyOf) && (field.anyOf as JsonSchema[]).every((b) => 'const' in b || b.type === 'null'));
        if (literal) cases.push([`unknown value ${at}`, withField(valid, path, 'not_a_known_value')]);
      }
      for (const [what, body] of cases) {
        checked++;
        const res = await call(route, withValidIds(route), body);
        if (res.statusCode !== 400 || res.json().error?.code !== 'invalid_value' || !isErrorBody(res.body)) failures.push(describeFailure(route, what, res));
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(10);
  });

  it('answers bad UUIDs in paths with 400 invalid_value', async () => {
    const failures: string[] = [];
    let checked = 0;
    for (const route of routes.filter((r) => pathParams(r.url).length > 0)) {
      const params = (route.schema?.params ?? {}) as JsonSchema;
      for (const name of pathParams(route.url)) {
        const field = ((params.properties ?? {}) as Record<string, JsonSchema>)[name];
        if (!field) {
          failures.push(`${routeName(route)}: :${name} has no schema, so nothing validates it`);
          continue;
        }
        // UUIDs are case-insensitive, so the pattern takes both cases: [0-9a-fA-F]{8}-…
        const takesUuid = /\[0-9a-f(?:A-F)?\]\{8\}/i.test((typeof field.pattern === 'string' ? field.pattern : '')) || field.format === 'uuid';
        if (!takesUuid) continue;
        checked++;
        // The last two fail in the router (malformed escape, over-long segment), before any route runs.
        for (const bad of ['not-a-uuid', '1234', `${org.ids.agent_id}0`, 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz', '%FF%FE', 'a'.repeat(300)]) {
          const url = fillPath(route.url, org.ids).replace(encodeURIComponent(org.ids[name] ?? ''), bad);
          const res = await call(route, url, validBody(route, org.ids));
          if (res.statusCode !== 400 || res.json().error?.code !== 'invalid_value') failures.push(describeFailure(route, `:${name}=${bad}`, res));
        }
      }
    }
    expect(failures).toEqual([]);
    // Guards the detection above: a pattern it no longer recognized would check nothing.
    expect(checked).toBeGreaterThan(10);
  });

  it('answers bad cursors and out-of-range limits with 400 invalid_value', async () => {
    const failures: string[] = [];
    const lists = routes.filter((r) => ((r.schema?.querystring as JsonSchema | undefined)?.properties as Record<string, unknown> | undefined)?.limit);
    expect(lists.map((r) => r.url)).toEqual(expect.arrayContaining(['/v1/keys', '/v1/agents', '/v1/audit-log']));
    for (const route of lists) {
      const props = (route.schema?.querystring as JsonSchema).properties as Record<string, JsonSchema>;
      const max = props.limit?.maximum as number;
      const bad: Array<Record<string, unknown>> = [{ limit: 0 }, { limit: -1 }, { limit: max + 1 }, { limit: 'ten' }, { limit: 1.5 }];
      if (props.cursor) bad.push({ cursor: 'not a cursor!' }, { cursor: '%%%' }, { cursor: 'x'.repeat(10_000) });
      for (const query of bad) {
        const url = withValidIds(route) + queryString({ ...validQuery(route, org.ids), ...query });
        const res = await call(route, url);
        if (res.statusCode !== 400 || res.json().error?.code !== 'invalid_value') failures.push(describeFailure(route, JSON.stringify(query), res));
      }
      const atMax = await call(route, withValidIds(route) + queryString({ ...validQuery(route, org.ids), limit: max }));
      if (atMax.statusCode !== 200) failures.push(describeFailure(route, `limit=${max}`, atMax));
    }
    expect(failures).toEqual([]);
  });

  it('answers a body over the size limit with 413 payload_too_large', async () => {
    const res = await ctx.request({
      method: 'POST', url: '/v1/agents', token: org.token, headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'big', description: 'x'.repeat(6 * 1024 * 1024) }),
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ error: { code: 'payload_too_large' } });
  });
});
