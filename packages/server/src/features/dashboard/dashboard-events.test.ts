import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../../../test/helpers/build-test-app.js';
import { event, newAgent, newTelemetryOrg, postEvents, type TelemetryOrg, stampEventsWith } from '../../../test/helpers/telemetry-fixtures.js';
import { telemetryTestStores } from '../../../test/helpers/test-databases.js';

type Listed = { data: Array<{ request_id: string; timestamp: string } & Record<string, unknown>>; has_more: boolean; next_cursor: string | null };

describe.each(telemetryTestStores)('dashboard event list on %s', (dialect) => {
  let ctx: TestContext;
  let org: TelemetryOrg;
  let other: string;
  const sent: Array<ReturnType<typeof event>> = [];
  const traceId = 'ab'.repeat(16);

  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
    stampEventsWith(ctx.clock);
    org = await newTelemetryOrg(ctx);
    other = await newAgent(ctx, org.token);
    const now = ctx.clock.now();
    for (let i = 0; i < 45; i++) {
      sent.push(event(i % 5 === 0 ? other : org.agentId, {
        // Pairs share a timestamp, so ordering and cursors must break ties by request_id.
        at: now - Math.floor(i / 2) * 60_000,
        method: i % 3 === 0 ? 'POST' : 'GET',
        url_host: i % 4 === 0 ? 'pay.example.com' : 'api.example.com',
        status_code: i % 7 === 0 ? 503 : 200,
        policy_result: i % 9 === 0 ? 'denied' : 'allowed',
        ...(i % 9 === 0 ? { deny_reason: 'no-pay' } : {}),
        ...(i === 17 ? { trace_id: traceId.toUpperCase(), span_id: '0123456789abcdef' } : {}),
      }));
    }
    expect((await postEvents(ctx, org.apiKey, sent)).statusCode).toBe(200);
  });
  afterAll(() => ctx.close());

  const list = async (query: string) => {
    const res = await ctx.request({ method: 'GET', url: `/v1/dashboard/events?${query}`, token: org.token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<Listed>();
  };
  const order = (events: typeof sent) =>
    [...events].sort((a, b) => Date.parse(b.timestamp) - Date.parse(a.timestamp) || (a.request_id < b.request_id ? 1 : -1)).map((e) => e.request_id);

  it('pages newest first with opaque cursors, visiting every event once', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Listed = await list(`limit=10${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      seen.push(...page.data.map((e) => e.request_id));
      expect(page.has_more).toBe(page.next_cursor !== null);
      cursor = page.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(5);
    expect(seen).toEqual(order(sent));
    const first = await list('');
    expect(first.data).toHaveLength(20);
    expect(first.data[0]).toEqual(expect.objectContaining({ request_id: order(sent)[0], trace_id: null, span_id: null, gen_ai: null }));
  });

  it('applies every filter', async () => {
    const cases: Array<[string, (e: (typeof sent)[number]) => boolean]> = [
      [`agent_id=${other}`, (e) => e.agent_id === other],
      ['method=post', (e) => e.method === 'POST'],
      ['url_host=PAY.example.com', (e) => e.url_host === 'pay.example.com'],
      ['status_code=503', (e) => e.status_code === 503 && e.policy_result !== 'denied'],
      ['policy_result=denied', (e) => e.policy_result === 'denied'],
      [`trace_id=${traceId}`, (e) => e.trace_id?.toLowerCase() === traceId],
      [`from=${sent[9]!.timestamp}&to=${sent[2]!.timestamp}`, (e) => e.timestamp >= sent[9]!.timestamp && e.timestamp < sent[2]!.timestamp],
      [`policy_result=allowed&url_host=pay.example.com&method=GET`, (e) => e.policy_result === 'allowed' && e.url_host === 'pay.example.com' && e.method === 'GET'],
    ];
    for (const [query, keep] of cases) {
      const expected = order(sent.filter(keep));
      expect(expected.length, query).toBeGreaterThan(0);
      expect((await list(`limit=100&${query}`)).data.map((e) => e.request_id), query).toEqual(expected);
    }
    const traced = (await list(`trace_id=${traceId}`)).data[0];
    expect(traced).toMatchObject({ trace_id: traceId, span_id: '0123456789abcdef' });
  });

  it('gets one event by request_id, and 404 for unknown or foreign ones', async () => {
    const target = sent[3]!;
    const res = await ctx.request({ method: 'GET', url: `/v1/dashboard/events/${encodeURIComponent(target.request_id)}`, token: org.token });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      request_id: target.request_id, agent_id: target.agent_id, timestamp: new Date(Date.parse(target.timestamp)).toISOString(),
      method: target.method, url_host: target.url_host, url_path: target.url_path, status_code: target.status_code,
      latency_ms: target.latency_ms, policy_result: target.policy_result, deny_reason: null, trace_id: null, span_id: null, gen_ai: null,
    });
    expect((await ctx.request({ method: 'GET', url: '/v1/dashboard/events/nope', token: org.token })).statusCode).toBe(404);
    const stranger = await ctx.newOrg();
    const foreign = await ctx.request({ method: 'GET', url: `/v1/dashboard/events/${encodeURIComponent(target.request_id)}`, token: stranger.token });
    expect(foreign.statusCode).toBe(404);
    expect((await ctx.request({ method: 'GET', url: '/v1/dashboard/events', token: stranger.token })).json()).toEqual({ data: [], has_more: false, next_cursor: null });
  });

  it('refuses bad cursors, limits and filters with 400', async () => {
    for (const query of ['cursor=garbage', `cursor=${Buffer.from('[1]').toString('base64url')}`, 'limit=0', 'limit=101', 'status_code=abc',
      'policy_result=maybe', 'agent_id=nope', 'trace_id=123', 'from=yesterday', `from=${sent[0]!.timestamp}&to=${sent[5]!.timestamp}`, 'colour=red']) {
      const res = await ctx.request({ method: 'GET', url: `/v1/dashboard/events?${query}`, token: org.token });
      expect(res.statusCode, query).toBe(400);
      expect(res.json().error.code, query).toBe('invalid_value');
    }
  });

  it('is readable with a JWT viewer or an events:read key, not by agents-only keys', async () => {
    const viewer = await ctx.token({ orgId: org.orgId, role: 'viewer' });
    expect((await ctx.request({ method: 'GET', url: '/v1/dashboard/events', token: viewer })).statusCode).toBe(200);
    const reader = await ctx.createKey(org.token, { kind: 'restricted', resources: { events: 'read' } });
    const agentsOnly = await ctx.createKey(org.token, { kind: 'restricted', resources: { agents: 'read' } });
    expect((await ctx.request({ method: 'GET', url: '/v1/dashboard/stats', apiKey: reader.key })).statusCode).toBe(200);
    expect((await ctx.request({ method: 'GET', url: '/v1/dashboard/stats', apiKey: agentsOnly.key })).statusCode).toBe(403);
    expect((await ctx.request({ method: 'GET', url: '/v1/dashboard/stats' })).statusCode).toBe(401);
  });
});
