import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../../../test/helpers/build-test-app.js';
import { event, newAgent, newSigner, newTelemetryOrg, postEvents, type TelemetryOrg, stampEventsWith } from '../../../test/helpers/telemetry-fixtures.js';
import { telemetryTestStores } from '../../../test/helpers/test-databases.js';

describe.each(telemetryTestStores)('POST /v1/telemetry on %s', (dialect) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
    stampEventsWith(ctx.clock);
  });
  afterAll(() => ctx.close());

  const stats = async (org: TelemetryOrg) =>
    (await ctx.request({ method: 'GET', url: '/v1/dashboard/stats', token: org.token })).json<{ total_calls: number; allowed_calls: number; denied_calls: number; error_calls: number }>();
  const listed = async (org: TelemetryOrg) =>
    (await ctx.request({ method: 'GET', url: '/v1/dashboard/events?limit=100', token: org.token })).json<{ data: Array<Record<string, unknown>> }>().data;

  it('accepts a batch on both hosts and counts every event exactly', async () => {
    const org = await newTelemetryOrg(ctx);
    const batch = [
      event(org.agentId), event(org.agentId, { policy_result: 'error', status_code: 502 }),
      event(org.agentId, { policy_result: 'denied', deny_reason: 'no-payments', status_code: 403, latency_ms: 3 }),
    ];
    const res = await postEvents(ctx, org.apiKey, batch);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ accepted: 3 });
    const onIngest = await postEvents(ctx, org.apiKey, [event(org.agentId)], { host: 'ingest', headers: {} });
    // The ingest host wants a signature; the route exists there (401, not 404).
    expect(onIngest.statusCode).toBe(401);
    expect(await stats(org)).toMatchObject({ total_calls: 3, allowed_calls: 1, denied_calls: 1, error_calls: 1 });
  });

  it('stores denied calls with null status_code and latency_ms', async () => {
    const org = await newTelemetryOrg(ctx);
    const denied = event(org.agentId, { policy_result: 'denied', deny_reason: 'block-deletes', status_code: 403, latency_ms: 4 });
    expect((await postEvents(ctx, org.apiKey, [denied])).statusCode).toBe(200);
    const got = await ctx.request({ method: 'GET', url: `/v1/dashboard/events/${denied.request_id}`, token: org.token });
    expect(got.json()).toMatchObject({ request_id: denied.request_id, policy_result: 'denied', deny_reason: 'block-deletes', status_code: null, latency_ms: null });
  });

  it('keeps trace ids and GenAI usage sent with an event, and refuses unknown usage fields', async () => {
    const org = await newTelemetryOrg(ctx);
    const genAi = {
      system: 'openai', operation: 'chat', request_model: 'gpt-4o', response_model: 'gpt-4o-2024-08-06',
      input_tokens: 1200, output_tokens: 300, cached_input_tokens: 1000, reasoning_tokens: 0, cost_usd: 0.0042,
    };
    const e = event(org.agentId, { trace_id: '4BF92F3577B34DA6A3CE929D0E0E4736', span_id: '00f067aa0ba902b7', gen_ai: genAi });
    const sent = await postEvents(ctx, org.apiKey, [e]);
    expect(sent.statusCode, sent.body).toBe(200);
    const stored = await ctx.request({ method: 'GET', url: `/v1/dashboard/events/${e.request_id}`, token: org.token });
    expect(stored.json()).toMatchObject({ trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', span_id: '00f067aa0ba902b7', gen_ai: genAi });
    const unknown = await postEvents(ctx, org.apiKey, [event(org.agentId, { gen_ai: { ...genAi, prompt: 'secret' } as never })]);
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.details).toContainEqual({ field: 'events.0.gen_ai.prompt', message: 'is not a known field' });
  });

  it('does not count a re-sent batch or a repeated request_id twice', async () => {
    const org = await newTelemetryOrg(ctx);
    const batch = [event(org.agentId), event(org.agentId), event(org.agentId)];
    for (let i = 0; i < 3; i++) expect((await postEvents(ctx, org.apiKey, batch)).json()).toEqual({ accepted: 3 });
    const again = event(org.agentId, { request_id: batch[0]!.request_id, timestamp: new Date(ctx.clock.now() - 60_000).toISOString() });
    const inBatchTwice = event(org.agentId);
    expect((await postEvents(ctx, org.apiKey, [again, inBatchTwice, { ...inBatchTwice }])).statusCode).toBe(200);
    expect((await stats(org)).total_calls).toBe(4);
    expect(await listed(org)).toHaveLength(4);
    // request_id is unique per organization, not globally.
    const other = await newTelemetryOrg(ctx);
    expect((await postEvents(ctx, other.apiKey, [{ ...batch[0]!, agent_id: other.agentId }])).statusCode).toBe(200);
    expect((await stats(other)).total_calls).toBe(1);
  });

  it('refuses a batch whole, naming the index, when one event names an unknown or foreign agent', async () => {
    const org = await newTelemetryOrg(ctx);
    const foreign = await newTelemetryOrg(ctx);
    const deleted = await newAgent(ctx, org.token);
    await ctx.request({ method: 'DELETE', url: `/v1/agents/${deleted}`, token: org.token });
    for (const agentId of [foreign.agentId, deleted, '0190a0f0-0000-7000-8000-000000000000']) {
      const res = await postEvents(ctx, org.apiKey, [event(org.agentId), event(org.agentId), event(agentId)]);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'invalid_value', details: [{ field: 'events.2.agent_id' }] });
    }
    expect((await stats(org)).total_calls).toBe(0);
    expect(await listed(org)).toEqual([]);
  });

  it('validates every field and the batch size, naming the offending event', async () => {
    const org = await newTelemetryOrg(ctx);
    const good = () => event(org.agentId);
    const cases: Array<[unknown, string]> = [
      [{ ...good(), agent_id: 'not-a-uuid' }, 'events.1.agent_id'],
      [{ ...good(), timestamp: 'yesterday' }, 'events.1.timestamp'],
      [{ ...good(), timestamp: new Date(ctx.clock.now() - 40 * 86_400_000).toISOString() }, 'events.1.timestamp'],
      [{ ...good(), request_id: '' }, 'events.1.request_id'],
      [{ ...good(), method: 'GET /' }, 'events.1.method'],
      [{ ...good(), url_host: '' }, 'events.1.url_host'],
      [{ ...good(), url_path: 42 }, 'events.1.url_path'],
      [{ ...good(), status_code: 200.5 }, 'events.1.status_code'],
      [{ ...good(), status_code: '200' }, 'events.1.status_code'],
      [{ ...good(), latency_ms: -1 }, 'events.1.latency_ms'],
      [{ ...good(), policy_result: 'maybe' }, 'events.1.policy_result'],
      [{ ...good(), deny_reason: 7 }, 'events.1.deny_reason'],
      [{ ...good(), trace_id: 'xyz' }, 'events.1.trace_id'],
      [{ ...good(), surprise: true }, 'events.1.surprise'],
      [{ ...good(), url_path: '/a\u0000b' }, 'events.1.url_path'],
      [(({ policy_result: _omitted, ...rest }) => rest)(good()), 'events.1.policy_result'],
    ];
    for (const [bad, field] of cases) {
      const res = await postEvents(ctx, org.apiKey, [good(), bad]);
      expect(res.statusCode, field).toBe(400);
      expect(res.json().error.code).toBe('invalid_value');
      expect(res.json().error.details.map((d: { field: string }) => d.field), field).toContain(field);
    }
    expect((await postEvents(ctx, org.apiKey, [])).statusCode).toBe(400);
    expect((await postEvents(ctx, org.apiKey, Array.from({ length: 1001 }, good))).statusCode).toBe(400);
    expect((await postEvents(ctx, org.apiKey, Array.from({ length: 1000 }, good))).statusCode).toBe(200);
    const notJson = await postEvents(ctx, org.apiKey, [], { raw: '{"events": [' });
    expect(notJson.statusCode).toBe(400);
    expect(notJson.json().error.code).toBe('invalid_json');
    expect((await postEvents(ctx, org.apiKey, [], { raw: JSON.stringify({ events: [good()], extra: 1 }) })).statusCode).toBe(400);
    expect((await stats(org)).total_calls).toBe(1000);
  });

  it('takes API keys with events:write only', async () => {
    const org = await newTelemetryOrg(ctx);
    const readOnly = await ctx.createKey(org.token, { kind: 'read_only' });
    const agentsOnly = await ctx.createKey(org.token, { kind: 'restricted', resources: { agents: 'write' } });
    const eventsOnly = await ctx.createKey(org.token, { kind: 'restricted', resources: { events: 'write' } });
    expect((await postEvents(ctx, readOnly.key, [event(org.agentId)])).statusCode).toBe(403);
    expect((await postEvents(ctx, agentsOnly.key, [event(org.agentId)])).statusCode).toBe(403);
    expect((await postEvents(ctx, eventsOnly.key, [event(org.agentId)])).statusCode).toBe(200);
    expect((await postEvents(ctx, 'crl_live_nope', [event(org.agentId)])).statusCode).toBe(401);
    const withJwt = await ctx.request({ method: 'POST', url: '/v1/telemetry', token: org.token, payload: { events: [event(org.agentId)] } });
    expect(withJwt.statusCode).toBe(403);
  });

  describe('signatures', () => {
    const signed = (body: string, signer: ReturnType<typeof newSigner>, withKey: boolean) => ({
      'x-corral-signature': signer.sign(body),
      ...(withKey ? { 'x-corral-public-key': signer.publicKeyHex } : {}),
    });

    it('registers the first key with a valid signature, then verifies against it on both hosts', async () => {
      const org = await newTelemetryOrg(ctx);
      const signer = newSigner();
      const body = JSON.stringify({ events: [event(org.agentId)] });
      const first = await postEvents(ctx, org.apiKey, [], { raw: body, host: 'ingest', headers: signed(body, signer, true) });
      expect(first.statusCode).toBe(200);
      const agent = await ctx.request({ method: 'GET', url: `/v1/agents/${org.agentId}`, token: org.token });
      expect(agent.json().public_key).toBe(signer.publicKeyHex);
      const next = JSON.stringify({ events: [event(org.agentId)] });
      expect((await postEvents(ctx, org.apiKey, [], { raw: next, host: 'ingest', headers: signed(next, signer, false) })).statusCode).toBe(200);
      expect((await postEvents(ctx, org.apiKey, [], { raw: next, host: 'api', headers: signed(next, signer, false) })).statusCode).toBe(200);
      // A key sent later cannot replace the registered one.
      const intruder = newSigner();
      const third = JSON.stringify({ events: [event(org.agentId)] });
      const swapped = await postEvents(ctx, org.apiKey, [], { raw: third, host: 'api', headers: signed(third, intruder, true) });
      expect(swapped.statusCode).toBe(401);
      expect((await stats(org)).total_calls).toBe(2);
    });

    it('refuses wrong signatures on both hosts and missing ones on the ingest host only', async () => {
      const org = await newTelemetryOrg(ctx);
      const signer = newSigner();
      const body = JSON.stringify({ events: [event(org.agentId)] });
      const tampered = body.replace('api.example.com', 'api.example.org');
      for (const host of ['api', 'ingest'] as const) {
        const wrong = await postEvents(ctx, org.apiKey, [], { raw: tampered, host, headers: signed(body, signer, true) });
        expect(wrong.statusCode).toBe(401);
        expect(wrong.json().error.code).toBe('unauthorized');
        const garbage = await postEvents(ctx, org.apiKey, [], { raw: body, host, headers: { 'x-corral-signature': 'zz', 'x-corral-public-key': signer.publicKeyHex } });
        expect(garbage.statusCode).toBe(401);
      }
      const noKeyAnywhere = await postEvents(ctx, org.apiKey, [], { raw: body, headers: { 'x-corral-signature': signer.sign(body) } });
      expect(noKeyAnywhere.statusCode).toBe(401);
      expect((await postEvents(ctx, org.apiKey, [], { raw: body, host: 'ingest' })).statusCode).toBe(401);
      expect((await stats(org)).total_calls).toBe(0);
      expect((await postEvents(ctx, org.apiKey, [], { raw: body, host: 'api' })).statusCode).toBe(200);
      const agent = await ctx.request({ method: 'GET', url: `/v1/agents/${org.agentId}`, token: org.token });
      expect(agent.json().public_key).toBeNull();
    });

    it('refuses a signed batch that mixes agents', async () => {
      const org = await newTelemetryOrg(ctx);
      const second = await newAgent(ctx, org.token);
      const signer = newSigner();
      const body = JSON.stringify({ events: [event(org.agentId), event(second)] });
      const res = await postEvents(ctx, org.apiKey, [], { raw: body, headers: signed(body, signer, true) });
      expect(res.statusCode).toBe(400);
    });
  });
});
