import { Validator } from '@seriousme/openapi-schema-validator';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from './helpers/build-test-app.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every `$ref` in the document, with the JSON pointer of the object that holds it. */
function refsOf(node: Json, at = '#'): Array<{ at: string; ref: string }> {
  if (Array.isArray(node)) return node.flatMap((item, i) => refsOf(item, `${at}/${i}`));
  if (typeof node !== 'object' || node === null) return [];
  return Object.entries(node).flatMap(([key, value]) =>
    key === '$ref' && typeof value === 'string' ? [{ at, ref: value }] : refsOf(value, `${at}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`),
  );
}

/** What a local reference (`#/a/b`) points at in `doc`, or undefined. */
function resolveRef(doc: Json, ref: string): Json | undefined {
  if (!ref.startsWith('#/')) return undefined;
  let node: Json | undefined = doc;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof node !== 'object' || node === null) return undefined;
    node = Array.isArray(node) ? node[Number(key)] : node[key];
  }
  return node;
}

/** Every `description` in the document. */
function descriptionsOf(node: Json): string[] {
  if (Array.isArray(node)) return node.flatMap(descriptionsOf);
  if (typeof node !== 'object' || node === null) return [];
  return Object.entries(node).flatMap(([key, value]) => (key === 'description' && typeof value === 'string' ? [value] : descriptionsOf(value)));
}

// The document depends on the routes only, not on the store: one engine is enough.
describe('the OpenAPI document', () => {
  let ctx: TestContext;
  let doc: Json;
  beforeAll(async () => {
    ctx = await buildTestContext('sqlite');
    const res = await ctx.request({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    doc = res.json<Json>();
  });
  afterAll(() => ctx.close());

  const schemaAt = (pointer: string) => resolveRef(doc, pointer) as { [key: string]: Json } | undefined;

  it('is valid OpenAPI 3.1 by the specification\'s own schema', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc) as Record<string, unknown>);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('is what docs/openapi.json holds, so the committed document never drifts (npm run openapi rewrites it)', () => {
    const committed = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../../docs/openapi.json'), 'utf8')) as Json;
    expect(committed).toEqual(doc);
  });

  it('resolves every $ref inside the document', () => {
    const refs = refsOf(doc);
    expect(refs.length).toBeGreaterThan(10);
    expect(refs.filter(({ ref }) => resolveRef(doc, ref) === undefined)).toEqual([]);
  });

  it('carries the shared schemas as components and refers to them', () => {
    const names = Object.keys(schemaAt('#/components/schemas') ?? {});
    expect(names).toEqual(expect.arrayContaining(['PolicyDocumentInput', 'PolicyDocument', 'PolicyRule', 'Matcher', 'PolicyVersion', 'Agent', 'ErrorBody']));
    expect(schemaAt('#/components/schemas/PolicyDocumentInput')).toMatchObject({ required: ['default'], additionalProperties: false });

    const createPolicy = '#/paths/~1v1~1agents~1{agent_id}~1policies/post/requestBody/content/application~1json/schema/properties/policy';
    expect(schemaAt(createPolicy)).toMatchObject({ $ref: '#/components/schemas/PolicyDocumentInput' });
    const version = '#/paths/~1v1~1agents~1{agent_id}~1policies~1active/get/responses/200/content/application~1json/schema';
    expect(schemaAt(version)).toEqual({ $ref: '#/components/schemas/PolicyVersion' });
    expect(schemaAt('#/components/schemas/PolicyDocument/properties/rules/items')).toEqual({ $ref: '#/components/schemas/PolicyRule' });

    // A description never points at a schema by name in place of a reference.
    expect(descriptionsOf(doc).filter((d) => /\bsee [A-Z][A-Za-z]+\b/.test(d))).toEqual([]);
  });

  it('documents the policy field by reference while the route still takes any object, for the service to check', () => {
    const route = ctx.routes.api.find((r) => r.method === 'POST' && r.url === '/v1/agents/:agent_id/policies');
    const policy = (route?.schema?.body as { properties: Record<string, Record<string, unknown>> } | undefined)?.properties.policy;
    expect(policy).toMatchObject({ type: 'object', additionalProperties: true });
    expect(policy).not.toHaveProperty('$ref');
    expect(policy).not.toHaveProperty('properties.rules');
  });
});
