import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from './helpers/build-test-app.js';
import { hostileStrings, isErrorBody } from './helpers/fuzz-cases.js';
import { type JsonSchema, sampleOf } from './helpers/json-samples.js';
import { pathParams, routeName, type RouteInfo } from './helpers/route-catalog.js';
import {
  createOrgFixture, credentialKinds, credentialsOf, fillPath, type OrgFixture, queryString, send, walkableRoutes,
} from './helpers/route-walk.js';
import { testDialects } from './helpers/test-databases.js';

/**
 * Property-based fuzzing (fast-check) over every route the server registers, each request built
 * from the route's own schemas: values that look valid (drawn from the schema), and hostile ones
 * (huge and non-finite numbers, any unicode, nested junk, prototype keys, wrong types). The
 * property: never a 5xx, every refusal in the contract's shape, the process still standing, and
 * the heap back near where it started after a full collection. 10,000 requests a run, split
 * over the stores; CORRAL_FUZZ_PROPERTY_RUNS changes the number; a failure prints fast-check's seed and path to replay it.
 */
const TOTAL = Number(process.env.CORRAL_FUZZ_PROPERTY_RUNS ?? 10_000);
// The requests of one run, split evenly over the stores it has.
const RUNS = Math.ceil(TOTAL / testDialects.length);

// A full collection on demand, as `node --expose-gc` gives it, without restarting the worker.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapAfterCollection = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const hostileNumber = fc.oneof(
  fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -(2 ** 63), 1e-320, -0, 0.1 + 0.2),
  fc.double(),
  fc.integer(),
  fc.bigInt().map((b) => b.toString()),
);
const hostileString = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.constantFrom(...hostileStrings, '__proto__', 'constructor', '\u0000', '\uFFFF\uD800', 'x'.repeat(100_001)),
);
const junk: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileNumber, hostileString, fc.boolean(), fc.constant(null),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(fc.oneof(hostileString, fc.constantFrom('__proto__', 'constructor', 'prototype')), tie('value'), { maxKeys: 5 }),
  ),
})).value;

/** A value for a schema: drawn from it (valid-looking), or hostile. */
function valueFor(schema: JsonSchema | undefined, ids: Record<string, string>): fc.Arbitrary<unknown> {
  const valid = fc.integer().map((seed) => sampleOf(schema ?? {}, { rng: mulberry(seed), ids }));
  if (!schema || schema.type !== 'object' || typeof schema.properties !== 'object') return fc.oneof(valid, junk);
  // An object: some fields drawn from their schemas, some replaced by hostile values, some missing, some unknown.
  const props = schema.properties as Record<string, JsonSchema>;
  const fields = Object.fromEntries(Object.entries(props).map(([name, field]) => [name, fc.option(fc.oneof(
    { weight: 3, arbitrary: fc.integer().map((seed) => sampleOf(field, { rng: mulberry(seed), ids }, name)) },
    { weight: 1, arbitrary: valueFor(field, ids) },
    { weight: 1, arbitrary: junk },
  ), { nil: undefined, freq: 6 })]));
  const mutated = fc.tuple(fc.record(fields), fc.option(fc.dictionary(hostileString, junk, { maxKeys: 2 }), { nil: undefined }))
    .map(([record, extra]) => {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(record)) if (v !== undefined) out[k] = v;
      return extra ? { ...out, ...extra } : out;
    });
  return fc.oneof({ weight: 2, arbitrary: valid }, { weight: 5, arbitrary: mutated }, { weight: 1, arbitrary: junk });
}

/** Any text as a path segment, byte by byte (a lone surrogate becomes U+FFFD, as on the wire). */
const percentEncoded = (text: string): string =>
  [...Buffer.from(text, 'utf8')].map((b) => (/[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, '0')}`)).join('');

function mulberry(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Generated {
  route: RouteInfo;
  url: string;
  payload: unknown;
  credential: 'user' | 'key' | undefined;
}

function requestFor(route: RouteInfo, ids: Record<string, string>): fc.Arbitrary<Generated> {
  const params = pathParams(route.url);
  const pathValue = (name: string) => fc.oneof(
    { weight: 4, arbitrary: fc.constant(ids[name] ?? randomUUID()) },
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: hostileString.map((s) => percentEncoded(s).slice(0, 300) || 'x') },
  );
  const query = route.schema?.querystring as JsonSchema | undefined;
  const body = route.schema?.body as JsonSchema | undefined;
  const kinds = credentialKinds(route);
  return fc.record({
    values: fc.tuple(...params.map(pathValue)),
    query: query ? valueFor(query, ids) : fc.constant(undefined),
    payload: body || route.method === 'POST' ? valueFor(body, ids) : fc.constant(undefined),
    credential: kinds.length > 0 ? fc.constantFrom(...kinds) : fc.constant(undefined),
  }).map(({ values, query: q, payload, credential }) => {
    const filled = fillPath(route.url, { ...ids, ...Object.fromEntries(params.map((p, i) => [p, '\u0001'.repeat(i + 1)])) });
    let url = filled;
    params.forEach((p, i) => (url = url.replace(encodeURIComponent('\u0001'.repeat(i + 1)), String(values[i]))));
    const qs = q !== null && typeof q === 'object' && !Array.isArray(q) ? queryString(q as Record<string, unknown>) : '';
    return { route, url: url + qs, payload, credential };
  });
}

describe.each(testDialects)('property-based fuzzing of every route on %s', (dialect) => {
  let ctx: TestContext;
  let org: OrgFixture;
  let routes: RouteInfo[];

  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
    routes = walkableRoutes(ctx);
    org = await createOrgFixture(ctx, routes, 'fuzz-property');
  });
  afterAll(() => ctx.close());

  it(`answers ${RUNS} generated requests without a 5xx, and the heap comes back`, { timeout: 900_000 }, async () => {
    const before = heapAfterCollection();
    let sent = 0;
    const byRoute = new Map<string, number>();
    const request = fc.constantFrom(...routes).chain((route) => requestFor(route, org.ids));
    await fc.assert(
      fc.asyncProperty(request, async ({ route, url, payload, credential }) => {
        const res = await send(ctx, {
          method: route.method, url, host: route.host, ...(credential ? credentialsOf(org, credential) : {}),
          ...(payload === undefined ? {} : typeof payload === 'object' && payload !== null ? { payload } : { payload: JSON.stringify(payload), headers: { 'content-type': 'application/json' } }),
        });
        sent++;
        byRoute.set(routeName(route), (byRoute.get(routeName(route)) ?? 0) + 1);
        if (res.statusCode >= 500) throw new Error(`${routeName(route)} ${url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
        if (res.statusCode >= 400 && !isErrorBody(res.body)) throw new Error(`${routeName(route)} ${url}: error body not in the contract's shape: ${res.body.slice(0, 300)}`);
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
    expect(sent).toBe(RUNS);
    // Every route was drawn (thousands of draws over a few dozen routes).
    expect(routes.filter((r) => !byRoute.has(routeName(r))).map(routeName)).toEqual([]);
    // Still serving, and what the requests allocated is collectable.
    expect((await ctx.request({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    const grewBy = heapAfterCollection() - before;
    expect(grewBy).toBeLessThan(32 * 1024 * 1024);
  });
});
