import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from './helpers/build-test-app.js';
import { pathParams, routeName } from './helpers/route-catalog.js';
import { testDialects } from './helpers/test-databases.js';

interface OpenApiOperation {
  parameters?: Array<{ in: string; name: string; schema?: unknown }>;
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}
interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { securitySchemes?: Record<string, unknown> };
}

describe.each(testDialects)('system endpoints on %s', (dialect) => {
  let ctx: TestContext;
  let owner: { orgId: string; token: string };
  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
    owner = await ctx.newOrg();
  });
  afterAll(() => ctx.close());

  it('answers GET /healthz on both hosts without credentials', async () => {
    for (const host of ['api', 'ingest'] as const) {
      const res = await ctx.request({ method: 'GET', url: '/healthz', host });
      expect(res.statusCode, host).toBe(200);
      expect(res.json()).toEqual({ status: 'ok' });
      expect(res.headers['x-request-id'], host).toBeTruthy();
    }
  });

  it('keeps a sane caller request id and replaces a hostile one', async () => {
    const kept = await ctx.request({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-123.abc' } });
    expect(kept.headers['x-request-id']).toBe('trace-123.abc');
    const replaced = await ctx.request({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'bad id\twith\u00e9' } });
    expect(replaced.headers['x-request-id']).not.toContain(' ');
  });

  it('serves the API document as OpenAPI 3.1, generated from every route with its schemas', async () => {
    const res = await ctx.request({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json<OpenApiDocument>();
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info.title).toBe('Corral API');
    expect(Object.keys(doc.components?.securitySchemes ?? {})).toEqual(expect.arrayContaining(['bearerAuth', 'apiKey']));

    const missing: string[] = [];
    for (const route of ctx.routes.api) {
      if (route.method === 'HEAD' || route.url === '/openapi.json') continue;
      const path = route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      const op = doc.paths[path]?.[route.method.toLowerCase()];
      if (!op) {
        missing.push(`${routeName(route)}: not in the document`);
        continue;
      }
      const inPath = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
      if (inPath.sort().join() !== pathParams(route.url).sort().join()) missing.push(`${routeName(route)}: path parameters ${inPath.join()}`);
      const query = Object.keys(((route.schema?.querystring as { properties?: object } | undefined)?.properties ?? {}));
      const inQuery = (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
      if (query.some((q) => !inQuery.includes(q))) missing.push(`${routeName(route)}: query parameters ${inQuery.join()} (want ${query.join()})`);
      if (route.schema?.body && !op.requestBody?.content['application/json']?.schema) missing.push(`${routeName(route)}: no request body schema`);
      const response = route.schema?.response as Record<string, unknown> | undefined;
      // Public system routes (health, metrics) answer plain shapes or text; every other route declares its answer.
      if (!response && !route.auth?.public) missing.push(`${routeName(route)}: declares no response schema`);
      for (const status of Object.keys(response ?? {})) {
        if (!op.responses[status]) missing.push(`${routeName(route)}: response ${status} missing`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('generates the document from the schemas: the agent body carries its limits', async () => {
    const doc = (await ctx.request({ method: 'GET', url: '/openapi.json' })).json<OpenApiDocument>();
    const schema = doc.paths['/v1/agents']?.post?.requestBody?.content['application/json']?.schema as {
      properties: { name: { maxLength: number } }; required: string[]; additionalProperties: boolean;
    };
    expect(schema.required).toEqual(['name']);
    expect(schema.properties.name.maxLength).toBe(100);
    expect(schema.additionalProperties).toBe(false);
    const list = doc.paths['/v1/agents']?.get?.parameters?.find((p) => p.name === 'limit');
    expect(list?.schema).toMatchObject({ minimum: 1, maximum: 100, default: 20 });
  });

  it('exposes per-route request counts and latency histograms in Prometheus format', async () => {
    const missing = '01900000-0000-7000-8000-000000000000';
    await ctx.request({ method: 'GET', url: '/v1/agents', token: owner.token });
    await ctx.request({ method: 'GET', url: '/v1/agents', token: owner.token });
    await ctx.request({ method: 'GET', url: `/v1/agents/${missing}`, token: owner.token });
    await ctx.request({ method: 'GET', url: '/healthz', host: 'ingest' });

    const res = await ctx.request({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    const text = res.body;
    expect(text).toContain('# TYPE corral_http_requests_total counter');
    expect(text).toContain('# TYPE corral_http_request_duration_seconds histogram');
    expect(text).toMatch(/corral_http_requests_total\{host="api",method="GET",route="\/v1\/agents",status="200"\} 2\b/);
    // The route template, never the raw URL: label values stay bounded.
    expect(text).toMatch(/corral_http_requests_total\{host="api",method="GET",route="\/v1\/agents\/:agent_id",status="404"\} 1\b/);
    expect(text).not.toContain(missing);
    expect(text).toMatch(/corral_http_request_duration_seconds_bucket\{le="0\.005",host="api",method="GET",route="\/v1\/agents"\} \d+/);
    expect(text).toMatch(/corral_http_request_duration_seconds_count\{host="api",method="GET",route="\/v1\/agents"\} 2\b/);
    expect(text).toMatch(/corral_http_request_duration_seconds_sum\{host="api",method="GET",route="\/v1\/agents"\} [\d.e-]+/);
    expect(text).toMatch(/corral_http_requests_total\{host="ingest",method="GET",route="\/healthz",status="200"\} \d+/);
    expect(text).toContain('process_cpu_user_seconds_total');
  });

  it('answers unknown routes with the contract 404 body', async () => {
    const res = await ctx.request({ method: 'GET', url: '/v1/nothing-here' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: { code: 'not_found', request_id: expect.any(String) } });
  });
});
