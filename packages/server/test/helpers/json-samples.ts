import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { randomBytes, randomUUID } from 'node:crypto';

/**
 * Valid and invalid instances of a route's JSON schema (TypeBox output), for walks over routes
 * whose bodies nobody wrote samples for. A sample is checked against the schema with the same
 * Ajv settings as the server, so a generator gap shows up as a clear failure, not a 400 blamed
 * on the route.
 */
export type JsonSchema = { [key: string]: unknown };
export type Rng = () => number;

/** Small seeded PRNG (mulberry32), so a failing fuzz case can be replayed from its seed. */
export function createRng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
export const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)] as T;

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const bodyAjv = addFormats(new Ajv({ coerceTypes: false, useDefaults: false, allErrors: true, strict: false }));
const textAjv = addFormats(new Ajv({ coerceTypes: 'array', useDefaults: false, allErrors: true, strict: false }));
const compiled = { body: new WeakMap<object, ValidateFunction>(), text: new WeakMap<object, ValidateFunction>() };

/** Whether `value` satisfies `schema` the way the server judges a body (`text`: query or params). */
export function conforms(schema: JsonSchema, value: unknown, part: 'body' | 'text' = 'body'): boolean {
  let validate = compiled[part].get(schema);
  if (!validate) {
    validate = (part === 'body' ? bodyAjv : textAjv).compile(schema);
    compiled[part].set(schema, validate);
  }
  return validate(structuredClone(value)) === true;
}

export interface SampleOptions {
  /** Values for string fields by name (e.g. agent_id → an existing agent). */
  ids?: Readonly<Record<string, string>>;
  /** Include optional properties too. */
  full?: boolean;
  rng?: Rng;
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const futureIso = () => new Date(Date.now() + 86_400_000).toISOString();

function typeOf(schema: JsonSchema): string | undefined {
  const t = schema.type;
  if (Array.isArray(t)) return t.find((x) => x !== 'null') as string | undefined;
  if (typeof t === 'string') return t;
  if (schema.properties) return 'object';
  return undefined;
}

function sampleString(schema: JsonSchema, key: string | undefined, opts: SampleOptions): string {
  const given = key ? opts.ids?.[key] : undefined;
  const candidates = [
    ...(given ? [given] : []),
    ...(typeof schema.default === 'string' ? [schema.default] : []),
  ];
  const format = schema.format;
  if (format === 'date-time') candidates.push(futureIso());
  if (format === 'date') candidates.push('2030-01-01');
  if (format === 'email') candidates.push('ops@example.com');
  if (format === 'uri' || format === 'url') candidates.push('https://example.com/hook');
  if (format === 'uuid') candidates.push(randomUUID());
  candidates.push('sample', randomUUID(), hex(32), hex(16), hex(8), 'GET', 'api.example.com', '/v1/items/{id}', 'a', '1');
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
  const fits = (s: string) => s.length >= min && s.length <= max && conforms(schema, s);
  const padded = candidates.map((c) => (c.length < min ? c.padEnd(min, 'x') : c));
  return padded.find(fits) ?? padded[0] ?? 'sample';
}

function sampleNumber(schema: JsonSchema, integer: boolean): number {
  if (typeof schema.default === 'number') return schema.default;
  const lo = typeof schema.minimum === 'number' ? schema.minimum : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : 1;
  const hi = typeof schema.maximum === 'number' ? schema.maximum : typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum - 1 : Math.max(lo, 10);
  const value = Math.min(Math.max(lo, 1), hi);
  return integer ? Math.ceil(value) : value;
}

/** A value that satisfies `schema`, built from its keywords; ids are taken from `opts.ids` by field name. */
export function sampleOf(schema: JsonSchema, opts: SampleOptions = {}, key?: string): unknown {
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return opts.rng ? pick(opts.rng, schema.enum) : schema.enum[0];
  const branches = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (branches) {
    const nonNull = branches.filter((b) => b.type !== 'null');
    const order = opts.rng ? [pick(opts.rng, nonNull.length ? nonNull : branches), ...branches] : [...nonNull, ...branches];
    for (const branch of order) {
      const value = sampleOf(branch, opts, key);
      if (conforms(schema, value)) return value;
    }
    return sampleOf(order[0] ?? {}, opts, key);
  }
  if (Array.isArray(schema.allOf)) {
    return Object.assign({}, ...(schema.allOf as JsonSchema[]).map((s) => sampleOf(s, opts, key)));
  }
  switch (typeOf(schema)) {
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set((schema.required as string[] | undefined) ?? []);
      const out: Record<string, unknown> = {};
      for (const [name, prop] of Object.entries(props)) {
        const include = required.has(name) || opts.full || (opts.rng ? opts.rng() < 0.5 : false) || (opts.ids?.[name] !== undefined);
        if (include) out[name] = sampleOf(prop, opts, name);
      }
      return out;
    }
    case 'array': {
      const items = (schema.items ?? {}) as JsonSchema;
      const n = Math.max(typeof schema.minItems === 'number' ? schema.minItems : 1, 1);
      return Array.from({ length: n }, () => sampleOf(items, opts, key));
    }
    case 'string':
      return sampleString(schema, key, opts);
    case 'integer':
      return sampleNumber(schema, true);
    case 'number':
      return sampleNumber(schema, false);
    case 'boolean':
      return opts.rng ? opts.rng() < 0.5 : true;
    case 'null':
      return null;
    default:
      return 'sample';
  }
}

/** Each property of an object schema, nested objects included, with its path. */
export function fieldsOf(schema: JsonSchema, path: string[] = []): Array<{ path: string[]; schema: JsonSchema; required: boolean }> {
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return Object.entries(props).flatMap(([name, prop]) => [
    { path: [...path, name], schema: prop, required: required.has(name) },
    ...(typeOf(prop) === 'object' && prop.properties ? fieldsOf(prop, [...path, name]) : []),
  ]);
}

/** A deep copy of `value` with the field at `path` set (or removed when `replacement` is `remove`). */
export const remove = Symbol('remove');
export function withField(value: unknown, path: string[], replacement: unknown): unknown {
  const copy = structuredClone(value) as Record<string, unknown>;
  let node = copy;
  for (const part of path.slice(0, -1)) {
    if (typeof node[part] !== 'object' || node[part] === null) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  const leaf = path[path.length - 1] ?? '';
  if (replacement === remove) delete node[leaf];
  else node[leaf] = replacement;
  return copy;
}

/** A random JSON value of bounded depth: the shapes a careless or hostile client might send. */
export function randomJson(rng: Rng, depth = 0): unknown {
  const scalars: Array<() => unknown> = [
    () => null,
    () => rng() < 0.5,
    () => Math.floor(rng() * 2 ** 31) * (rng() < 0.5 ? -1 : 1),
    () => pick(rng, [0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, Number.MIN_VALUE]),
    () => randomString(rng),
  ];
  if (depth >= 3 || rng() < 0.5) return pick(rng, scalars)();
  if (rng() < 0.5) return Array.from({ length: Math.floor(rng() * 4) }, () => randomJson(rng, depth + 1));
  const out: Record<string, unknown> = {};
  for (let i = Math.floor(rng() * 4); i > 0; i--) out[randomString(rng, 12)] = randomJson(rng, depth + 1);
  return out;
}

export function randomString(rng: Rng, maxLength = 40): string {
  const specials = ['', ' ', '\u0000', '\n', '😀', 'é', '\u202e', '%00', '../', "'; DROP TABLE agents; --", '${x}', '<script>', '\\', '"'];
  if (rng() < 0.3) return pick(rng, specials);
  const length = Math.floor(rng() * maxLength);
  let s = '';
  for (let i = 0; i < length; i++) s += String.fromCodePoint(rng() < 0.8 ? 32 + Math.floor(rng() * 95) : Math.floor(rng() * 0xd7ff));
  return s;
}
