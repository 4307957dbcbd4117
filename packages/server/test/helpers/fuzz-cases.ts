import { randomUUID } from 'node:crypto';
import { fieldsOf, type JsonSchema, pick, randomJson, randomString, remove, type Rng, sampleOf, withField, conforms } from './json-samples.js';
import type { RouteInfo } from './route-catalog.js';
import { queryString } from './route-walk.js';

/** One generated request: what the fuzz walk sends and what a failure report shows. */
export interface FuzzRequest {
  url: string;
  payload?: string | object;
  headers?: Record<string, string>;
}

const badIds = (rng: Rng) => [
  'not-a-uuid', '0', '-1', 'null', '%20', '%00', '%FF%FE', '..%2F..%2Fetc', 'a'.repeat(300), '00000000-0000-0000-0000-000000000000',
  `${randomUUID()}x`, `${randomUUID().toUpperCase()}X`, '1e309', encodeURIComponent(randomString(rng, 20)) || 'x',
];

function fuzzPathValue(rng: Rng, real: string | undefined): string {
  const roll = rng();
  if (roll < 0.4 && real !== undefined) return real;
  // UUIDs are case-insensitive: the upper-case spelling names the same resource.
  if (roll < 0.5 && real !== undefined) return real.toUpperCase();
  if (roll < 0.7) return pick(rng, [randomUUID(), randomUUID().toUpperCase()]);
  return pick(rng, badIds(rng));
}

/** Wrong values a field of this schema must refuse (only those the schema really refuses). */
export function wrongValuesFor(schema: JsonSchema, part: 'body' | 'text'): unknown[] {
  const candidates = part === 'body'
    ? [12345, 'text', true, null, [], {}, 1.5, -1]
    : ['not-a-number', '-1', '1.5', 'maybe', '', 'x'.repeat(5000)];
  return candidates.filter((v) => !conforms(schema, v, part));
}

function fuzzQuery(rng: Rng, route: RouteInfo, ids: Record<string, string>): Record<string, unknown> {
  const schema = route.schema?.querystring as JsonSchema | undefined;
  const query: Record<string, unknown> = schema ? (sampleOf(schema, { rng, ids }) as Record<string, unknown>) : {};
  for (const { path, schema: field } of schema ? fieldsOf(schema) : []) {
    if (rng() < 0.3) query[path.join('.')] = pick(rng, [...wrongValuesFor(field, 'text'), randomString(rng), randomUUID()]);
  }
  if (rng() < 0.3) query.limit = pick(rng, [-1, 0, 1, 100, 101, 201, 'abc', '1e3', '', ' 5', 1.5, 2 ** 53, [1, 2]]);
  if (rng() < 0.3) query.cursor = pick(rng, [randomUUID(), ids.agent_id ?? 'x', 'x'.repeat(600), '%FF', '', 'eyJpZCI6MX0', randomString(rng)]);
  if (rng() < 0.1) query[randomString(rng, 10) || 'q'] = randomString(rng);
  return query;
}

function fuzzBody(rng: Rng, schema: JsonSchema | undefined, ids: Record<string, string>): FuzzRequest['payload'] | undefined {
  const roll = rng();
  if (!schema || roll < 0.1) return roll < 0.05 ? undefined : (randomJson(rng) as object);
  const valid = sampleOf(schema, { rng, ids });
  if (roll < 0.35) return valid as object;
  if (roll < 0.8) {
    const fields = fieldsOf(schema);
    if (fields.length === 0) return randomJson(rng) as object;
    const { path, schema: field } = pick(rng, fields);
    const replacement = pick(rng, [
      remove, null, randomJson(rng), randomString(rng), 'x'.repeat(pick(rng, [101, 1001, 10_001, 100_001])),
      'not_a_known_value', ...wrongValuesFor(field, 'body'), sampleOf(field, { rng, ids }), [sampleOf(field, { rng })],
    ]);
    const mutated = withField(valid, path, replacement) as Record<string, unknown>;
    if (rng() < 0.2) mutated[randomString(rng, 12) || 'extra'] = randomJson(rng);
    return mutated;
  }
  if (roll < 0.9) return randomJson(rng) as object;
  return pick(rng, ['{', '{"a":', '[1,2', 'null', '""', '{"a":1}}', '\u0000', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{}}}']);
}

/** A random request for `route`, mostly near-valid so it reaches past validation into the handler. */
export function fuzzRequest(rng: Rng, route: RouteInfo, ids: Record<string, string>): FuzzRequest {
  // Path values are already URL-safe (or deliberately percent-mangled), so they go in as they are.
  const path = route.url.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => fuzzPathValue(rng, ids[name]));
  const url = path + queryString(fuzzQuery(rng, route, ids));
  if (route.method === 'GET' || route.method === 'DELETE') return { url };
  const payload = fuzzBody(rng, route.schema?.body as JsonSchema | undefined, ids);
  const contentType = rng() < 0.05 ? pick(rng, ['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'application/octet-stream']) : undefined;
  return {
    url,
    ...(payload === undefined ? {} : { payload }),
    headers: typeof payload === 'string' || contentType ? { 'content-type': contentType ?? 'application/json' } : {},
  };
}

/** Text that has broken stores and parsers before: each must be stored or refused, never a 5xx. */
export const hostileStrings = [
  'a\u0000b', '\u0000', '\ud800', 'x\udfff', '😀'.repeat(20), '\u202eevil', "'; DROP TABLE agents; --", '%00', '\\', '"', '\n\r\t',
  'é'.repeat(50), '\uFEFF', '${jndi:ldap://x}', '{{7*7}}', '../../etc/passwd', ' ', '',
];

/** Whether a body is the contract's error shape (contract section 3). */
export function isErrorBody(text: string): boolean {
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; request_id?: unknown } };
    return typeof body.error?.code === 'string' && /^[a-z_]+$/.test(body.error.code) && typeof body.error.message === 'string'
      && typeof body.error.request_id === 'string';
  } catch {
    return false;
  }
}

/** String fields with no bound on their length: an over-long value could not get its 400. */
export function unboundedStrings(schema: JsonSchema, path = ''): string[] {
  const out: string[] = [];
  const visit = (s: JsonSchema, at: string) => {
    if (s.const !== undefined || Array.isArray(s.enum)) return;
    for (const branch of [...((s.anyOf as JsonSchema[]) ?? []), ...((s.oneOf as JsonSchema[]) ?? []), ...((s.allOf as JsonSchema[]) ?? [])]) visit(branch, at);
    if (s.type === 'string' && s.maxLength === undefined && s.format === undefined && !/^\^.*\$$/.test((typeof s.pattern === 'string' ? s.pattern : ''))) out.push(at || '(body)');
    for (const [name, prop] of Object.entries((s.properties ?? {}) as Record<string, JsonSchema>)) visit(prop, at ? `${at}.${name}` : name);
    if (s.items && typeof s.items === 'object') visit(s.items as JsonSchema, `${at}[]`);
  };
  visit(schema, path);
  return out;
}
