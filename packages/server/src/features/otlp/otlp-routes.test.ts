import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../../../test/helpers/build-test-app.js';
import {
  decodeExportResponse, httpSpan, otlpJson, otlpProtobuf, postTraces, SPAN_KIND, type SpanSpec,
} from '../../../test/helpers/otlp-fixtures.js';
import { newAgent, newTelemetryOrg, type TelemetryOrg } from '../../../test/helpers/telemetry-fixtures.js';
import { testDialects } from '../../../test/helpers/test-databases.js';

interface Listed {
  request_id: string; agent_id: string; method: string; url_host: string; url_path: string; status_code: number | null;
  latency_ms: number | null; policy_result: string; deny_reason: string | null; trace_id: string | null; span_id: string | null;
  gen_ai: Record<string, unknown> | null; timestamp: string;
}

const genAiSpan = (attributes: SpanSpec['attributes'], overrides: SpanSpec = {}): SpanSpec => ({ kind: SPAN_KIND.client, attributes, ...overrides });

describe.each(testDialects)('POST /v1/traces on %s', (dialect) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
  });
  afterAll(() => ctx.close());

  const events = async (org: TelemetryOrg) =>
    (await ctx.request({ method: 'GET', url: '/v1/dashboard/events?limit=100', token: org.token })).json<{ data: Listed[] }>().data;
  const agents = async (org: TelemetryOrg) =>
    (await ctx.request({ method: 'GET', url: '/v1/agents?limit=100', token: org.token })).json<{ data: Array<{ id: string; name: string }> }>().data;
  const dashboard = async <T>(org: TelemetryOrg, what: string) =>
    (await ctx.request({ method: 'GET', url: `/v1/dashboard/${what}`, token: org.token })).json<T>();

  it('stores HTTP client and GenAI spans from protobuf, provisions the agent, skips other spans', async () => {
    const org = await newTelemetryOrg(ctx);
    const start = ctx.clock.now() - 60_000;
    const http = httpSpan({ start, durationMs: 42 });
    const llm = genAiSpan({
      'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-4o', 'gen_ai.usage.input_tokens': 1000, 'gen_ai.usage.output_tokens': 200,
    }, { start: start + 10, status: 2 });
    const internal: SpanSpec = { start, kind: SPAN_KIND.internal, attributes: { 'db.system': 'postgresql' } };
    const res = await postTraces(ctx, org.apiKey, otlpProtobuf([{ service: 'billing-bot', spans: [http, llm, internal] }]));
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-protobuf');
    expect(res.headers['ratelimit-limit']).toBeDefined();
    expect(decodeExportResponse(res.rawPayload)).toEqual({});

    const provisioned = (await agents(org)).find((a) => a.name === 'billing-bot');
    expect(provisioned).toBeDefined();
    const stored = await events(org);
    expect(stored).toHaveLength(2);
    expect(stored.find((e) => e.span_id === http.spanId)).toMatchObject({
      agent_id: provisioned?.id, method: 'GET', url_host: 'api.example.com', url_path: '/v1/items/{id}', status_code: 200, latency_ms: 42,
      policy_result: 'allowed', trace_id: http.traceId, request_id: `${http.traceId}:${http.spanId}`, gen_ai: null,
      timestamp: new Date(start).toISOString(),
    });
    expect(stored.find((e) => e.span_id === llm.spanId)).toMatchObject({
      method: 'POST', url_host: 'openai', policy_result: 'error',
      gen_ai: { system: 'openai', request_model: 'gpt-4o', input_tokens: 1000, output_tokens: 200 },
    });
  });

  it('reads OTLP JSON, gzip or not, and stores a re-sent span once', async () => {
    const org = await newTelemetryOrg(ctx);
    const span = httpSpan({ start: ctx.clock.now() - 1000 });
    const body = JSON.stringify(otlpJson([{ service: 'json-agent', spans: [span] }]));
    const first = await postTraces(ctx, org.apiKey, body, { gzip: true });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({});
    const again = await postTraces(ctx, org.apiKey, body);
    expect(again.statusCode).toBe(200);
    expect(await events(org)).toHaveLength(1);
    expect(await dashboard<{ total_calls: number }>(org, 'stats')).toMatchObject({ total_calls: 1 });
    expect((await agents(org)).filter((a) => a.name === 'json-agent')).toHaveLength(1);
  });

  it('maps the older HTTP conventions', async () => {
    const org = await newTelemetryOrg(ctx);
    const span: SpanSpec = {
      kind: SPAN_KIND.client, start: ctx.clock.now() - 1000,
      attributes: { 'http.method': 'post', 'http.url': 'https://legacy.example.com/orders/9f8e7d6c5b4a39281706f5e4d3c2b1a0', 'net.peer.name': 'Legacy.Example.com', 'http.status_code': 503 },
    };
    expect((await postTraces(ctx, org.apiKey, otlpProtobuf([{ service: 'old', spans: [span] }]))).statusCode).toBe(200);
    expect(await events(org)).toEqual([expect.objectContaining({ method: 'POST', url_host: 'legacy.example.com', url_path: '/orders/{id}', status_code: 503 })]);
  });

  it('fills policy_result and deny_reason from corral.policy.* and counts the rule', async () => {
    const org = await newTelemetryOrg(ctx);
    const denied = httpSpan({ start: ctx.clock.now() - 1000 });
    denied.attributes = { ...denied.attributes, 'corral.policy.result': 'denied', 'corral.policy.rule': 'no-deletes' };
    expect((await postTraces(ctx, org.apiKey, otlpProtobuf([{ service: 'p', spans: [denied] }]))).statusCode).toBe(200);
    expect(await events(org)).toEqual([expect.objectContaining({ policy_result: 'denied', deny_reason: 'no-deletes', status_code: null, latency_ms: null })]);
    expect(await dashboard(org, 'rule-hits')).toEqual([{ rule_name: 'no-deletes', total: 1, denied: 1, dry_run: 0 }]);
  });

  it('gives every unset or default service name one agent, unknown_service', async () => {
    const org = await newTelemetryOrg(ctx);
    const now = ctx.clock.now() - 1000;
    const body = otlpProtobuf([
      { service: undefined, spans: [httpSpan({ start: now })] },
      { service: 'unknown_service:node', spans: [httpSpan({ start: now })] },
    ]);
    expect((await postTraces(ctx, org.apiKey, body)).statusCode).toBe(200);
    const provisioned = (await agents(org)).filter((a) => a.name.startsWith('unknown_service'));
    expect(provisioned.map((a) => a.name)).toEqual(['unknown_service']);
    expect(new Set((await events(org)).map((e) => e.agent_id))).toEqual(new Set([provisioned[0]?.id]));
  });

  it("keeps organizations apart: the same service name is each organization's own agent", async () => {
    const a = await newTelemetryOrg(ctx);
    const b = await newTelemetryOrg(ctx);
    const spanA = httpSpan({ start: ctx.clock.now() - 1000 });
    const spanB = { ...httpSpan({ start: ctx.clock.now() - 1000 }), traceId: spanA.traceId, spanId: spanA.spanId };
    expect((await postTraces(ctx, a.apiKey, otlpProtobuf([{ service: 'shared-name', spans: [spanA] }]))).statusCode).toBe(200);
    // The same ids in another organization are another event, not a duplicate.
    expect((await postTraces(ctx, b.apiKey, otlpProtobuf([{ service: 'shared-name', spans: [spanB] }]))).statusCode).toBe(200);
    const agentA = (await agents(a)).find((x) => x.name === 'shared-name');
    const agentB = (await agents(b)).find((x) => x.name === 'shared-name');
    expect(agentA?.id).toBeDefined();
    expect(agentB?.id).not.toBe(agentA?.id);
    expect((await events(a)).map((e) => e.agent_id)).toEqual([agentA?.id]);
    expect((await events(b)).map((e) => e.agent_id)).toEqual([agentB?.id]);
    const cross = await ctx.request({ method: 'GET', url: `/v1/agents/${agentA?.id ?? ''}`, token: b.token });
    expect(cross.statusCode).toBe(404);
  });

  it('makes one agent when two exports of a new service arrive at once', async () => {
    const org = await newTelemetryOrg(ctx);
    const send = () => postTraces(ctx, org.apiKey, otlpProtobuf([{ service: 'racer', spans: [httpSpan({ start: ctx.clock.now() - 1000 })] }]));
    const answers = await Promise.all([send(), send(), send()]);
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200]);
    expect((await agents(org)).filter((a) => a.name === 'racer')).toHaveLength(1);
    expect(await events(org)).toHaveLength(3);
  });

  it('refuses the spans of a new service past the plan agent limit, in partial_success with the reason', async () => {
    const org = await newTelemetryOrg(ctx);
    await ctx.container.orgService.setPlan(org.orgId, 'free');
    for (let i = 0; i < 3; i++) await newAgent(ctx, org.token); // 4 agents with the fixture's one
    const now = ctx.clock.now() - 1000;
    const body = otlpProtobuf([
      { service: 'fifth', spans: [httpSpan({ start: now })] },
      { service: 'sixth', spans: [httpSpan({ start: now }), httpSpan({ start: now })] },
    ]);
    const res = await postTraces(ctx, org.apiKey, body);
    expect(res.statusCode).toBe(200);
    const answer = decodeExportResponse(res.rawPayload);
    expect(answer.partialSuccess?.rejectedSpans).toBe(2);
    expect(answer.partialSuccess?.errorMessage).toMatch(/free plan allows 5 agents; service "sixth"/);
    expect((await agents(org)).map((a) => a.name)).toContain('fifth');
    expect(await events(org)).toHaveLength(1);
  });

  it('answers undecodable bodies with 400, other formats with 415, and stores nothing', async () => {
    const org = await newTelemetryOrg(ctx);
    const good = otlpProtobuf([{ service: 'bad-bodies', spans: [httpSpan({ start: ctx.clock.now() - 1000 }), httpSpan({ start: ctx.clock.now() - 1000 })] }]);
    const json = otlpJson([{ service: 'bad-bodies', spans: [httpSpan({ start: ctx.clock.now() - 1000 })] }]) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<Record<string, unknown>> }> }> };
    const spanOf = (j: typeof json) => j.resourceSpans[0]?.scopeSpans[0]?.spans[0] ?? {};
    const wrongTypes = (field: string, value: unknown) => {
      const copy = structuredClone(json);
      spanOf(copy)[field] = value;
      return JSON.stringify(copy);
    };
    const cases: Array<[string, Promise<{ statusCode: number; json(): unknown }>, number, string]> = [
      ['truncated protobuf', postTraces(ctx, org.apiKey, good.subarray(0, good.length - 7)), 400, 'invalid_value'],
      ['wrong content type', postTraces(ctx, org.apiKey, good, { contentType: 'text/plain' }), 415, 'unsupported_media_type'],
      ['unsupported encoding', postTraces(ctx, org.apiKey, good, { headers: { 'content-encoding': 'br' } }), 415, 'unsupported_media_type'],
      ['gzip header on plain bytes', postTraces(ctx, org.apiKey, good, { headers: { 'content-encoding': 'gzip' } }), 400, 'invalid_value'],
      ['not JSON', postTraces(ctx, org.apiKey, '{"resourceSpans": ['), 400, 'invalid_json'],
      ['time as an object', postTraces(ctx, org.apiKey, wrongTypes('startTimeUnixNano', { n: 1 })), 400, 'invalid_value'],
      ['trace id not hex', postTraces(ctx, org.apiKey, wrongTypes('traceId', 'zz'.repeat(16))), 400, 'invalid_value'],
      ['kind unknown name', postTraces(ctx, org.apiKey, wrongTypes('kind', 'SPAN_KIND_NOPE')), 400, 'invalid_value'],
      ['spans not an array', postTraces(ctx, org.apiKey, JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: {} }] }] })), 400, 'invalid_value'],
    ];
    for (const [name, answer, status, code] of cases) {
      const res = await answer;
      expect({ name, status: res.statusCode }).toEqual({ name, status });
      expect(res.json()).toMatchObject({ error: { code } });
    }
    expect(await events(org)).toEqual([]);
    expect((await agents(org)).map((a) => a.name)).not.toContain('bad-bodies');
  });

  it('names the field of a JSON body with a wrong type', async () => {
    const org = await newTelemetryOrg(ctx);
    const res = await postTraces(ctx, org.apiKey, JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ name: 5 }] }] }] }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: { details: [{ field: 'resourceSpans.0.scopeSpans.0.spans.0.name', message: 'must be a string' }] } });
  });

  it('wants an API key allowed to write events', async () => {
    const org = await newTelemetryOrg(ctx);
    const body = otlpProtobuf([{ service: 'auth', spans: [httpSpan()] }]);
    expect((await postTraces(ctx, undefined, body)).statusCode).toBe(401);
    const readOnly = await ctx.createKey(org.token, { kind: 'read_only' });
    const refused = await postTraces(ctx, readOnly.key, body);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ error: { code: 'forbidden' } });
    expect(await events(org)).toEqual([]);
  });

  it('is served on the ingest host only', async () => {
    const org = await newTelemetryOrg(ctx);
    const res = await ctx.request({ method: 'POST', url: '/v1/traces', apiKey: org.apiKey, payload: otlpProtobuf([{ service: 'x', spans: [httpSpan()] }]), headers: { 'content-type': 'application/x-protobuf' } });
    expect(res.statusCode).toBe(404);
  });

  it('reports tokens and cost per model, and token totals in stats and per-agent stats', async () => {
    const org = await newTelemetryOrg(ctx);
    const at = ctx.clock.now() - 60_000;
    const spans = [
      genAiSpan({ 'gen_ai.provider.name': 'openai', 'gen_ai.response.model': 'gpt-4o-2024-08-06', 'gen_ai.usage.input_tokens': 1_000_000, 'gen_ai.usage.output_tokens': 100_000, 'gen_ai.usage.cache_read.input_tokens': 200_000 }, { start: at }),
      genAiSpan({ 'llm.provider': 'openai', 'llm.model_name': 'gpt-4o-2024-08-06', 'llm.token_count.prompt': 1_000_000, 'llm.token_count.completion': 100_000 }, { start: at }),
      genAiSpan({ 'gen_ai.system': 'acme', 'gen_ai.request.model': 'acme-1', 'gen_ai.usage.prompt_tokens': 10, 'gen_ai.usage.completion_tokens': 5, 'gen_ai.usage.reasoning.output_tokens': 3 }, { start: at }),
    ];
    expect((await postTraces(ctx, org.apiKey, otlpProtobuf([{ service: 'llm-agent', spans }]))).statusCode).toBe(200);
    const models = await dashboard<unknown[]>(org, 'models');
    // gpt-4o: 800k uncached × $2.50 + 200k cached × $1.25 + 100k × $10 per million, then the same without cache at $2.50.
    expect(models).toEqual([
      { provider: 'openai', model: 'gpt-4o-2024-08-06', calls: 2, input_tokens: 2_000_000, output_tokens: 200_000, cached_input_tokens: 200_000, reasoning_tokens: 0, cost_usd: 2 + 0.25 + 1 + 2.5 + 1 },
      { provider: 'acme', model: 'acme-1', calls: 1, input_tokens: 10, output_tokens: 5, cached_input_tokens: 0, reasoning_tokens: 3, cost_usd: null },
    ]);
    expect(await dashboard(org, 'stats')).toMatchObject({ input_tokens: 2_000_010, output_tokens: 200_005, cached_input_tokens: 200_000, reasoning_tokens: 3, cost_usd: 6.75, unpriced_calls: 1 });
    const perAgent = await dashboard<Array<{ agent_id: string; agent_name: string; cost_usd: number | null; input_tokens: number }>>(org, 'agents');
    expect(perAgent.find((a) => a.agent_name === 'llm-agent')).toMatchObject({ input_tokens: 2_000_010, cost_usd: 6.75 });
    expect(perAgent.find((a) => a.agent_id === org.agentId)).toMatchObject({ input_tokens: 0, cost_usd: null, unpriced_calls: 0 });
  });

  it('keeps a span whose only GenAI keys are unknown ones', async () => {
    const org = await newTelemetryOrg(ctx);
    const span = genAiSpan({ 'gen_ai.agent.name': 'planner' }, { kind: SPAN_KIND.internal, start: ctx.clock.now() - 1000 });
    expect((await postTraces(ctx, org.apiKey, otlpProtobuf([{ service: 'agentic', spans: [span] }]))).statusCode).toBe(200);
    expect(await events(org)).toEqual([expect.objectContaining({ span_id: span.spanId, gen_ai: {} })]);
    expect(await dashboard(org, 'models')).toEqual([expect.objectContaining({ provider: 'unknown', model: 'unknown', calls: 1, cost_usd: null })]);
  });
});

describe.each(testDialects)('POST /v1/traces rate limit on %s', (dialect) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await buildTestContext(dialect, { container: { rateLimits: { free: 3, team: 3, enterprise: 3 } } });
  });
  afterAll(() => ctx.close());

  it('answers 429 with Retry-After and stores nothing when the spans pass the limit', async () => {
    const org = await newTelemetryOrg(ctx);
    const now = ctx.clock.now() - 1000;
    const body = otlpProtobuf([{ service: 'busy', spans: [httpSpan({ start: now }), httpSpan({ start: now }), httpSpan({ start: now })] }]);
    expect((await postTraces(ctx, org.apiKey, body)).statusCode).toBe(200);
    const refused = await postTraces(ctx, org.apiKey, otlpProtobuf([{ service: 'busy', spans: [httpSpan({ start: now })] }]));
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    const listed = await ctx.request({ method: 'GET', url: '/v1/dashboard/events?limit=100', token: org.token });
    expect(listed.json<{ data: unknown[] }>().data).toHaveLength(3);
  });
});
