import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../../../test/helpers/build-test-app.js';
import { event, newTelemetryOrg, stampEventsWith, type TelemetryOrg } from '../../../test/helpers/telemetry-fixtures.js';
import type { EventRow } from './rollup-fold.js';

/**
 * The gate as a transport without the HTTP auth plugin (OTLP over gRPC) will use it: it
 * authenticates the key itself, and every refusal after the rate limit gives the quota back.
 */
describe('the ingest gate', () => {
  let ctx: TestContext;
  let org: TelemetryOrg;
  beforeAll(async () => {
    ctx = await buildTestContext('sqlite', { container: { rateLimits: { free: 100, team: 100, enterprise: 100 } } });
    stampEventsWith(ctx.clock);
    org = await newTelemetryOrg(ctx);
  });
  afterAll(() => ctx.close());

  const gate = () => ctx.container.ingestService;
  const rowOf = (agentId: string): EventRow => {
    const e = event(agentId);
    return {
      org_id: org.orgId, ts: Date.parse(e.timestamp), request_id: e.request_id, agent_id: agentId, method: e.method, url_host: e.url_host,
      url_path: e.url_path, status_code: e.status_code, latency_ms: e.latency_ms ?? null, policy_result: e.policy_result, deny_reason: null,
      trace_id: null, span_id: null, gen_ai: null, received_at: ctx.clock.now(),
    };
  };

  it('authenticates keys itself: none or a bad one is a 401, a JWT or a key without events:write a 403', async () => {
    await expect(gate().authenticate(undefined)).rejects.toMatchObject({ status: 401 });
    await expect(gate().authenticate('crl_live_nope')).rejects.toMatchObject({ status: 401 });
    const user = { kind: 'user' as const, orgId: org.orgId, subject: 'u', role: 'owner' as const, expiresAt: undefined };
    await expect(gate().ingest({ principal: user, count: 1, prepare: async () => [] })).rejects.toMatchObject({ status: 403 });
    const readOnly = (await ctx.createKey(org.token, { kind: 'read_only' })).key;
    await expect(gate().ingest({ principal: await gate().authenticate(readOnly), count: 1, prepare: async () => [] })).rejects.toMatchObject({ status: 403 });
  });

  it('stores what prepare maps, tells the quota, and gives it back when prepare refuses', async () => {
    const principal = await gate().authenticate(org.apiKey);
    const quotas: number[] = [];
    const stored = await gate().ingest({
      principal, count: 2, onQuota: (q) => quotas.push(q.remaining), prepare: async () => [rowOf(org.agentId), rowOf(org.agentId)],
    });
    expect(stored).toMatchObject({ received: 2, stored: [expect.anything(), expect.anything()] });
    expect(quotas).toEqual([98]);
    const refused = gate().ingest({ principal, count: 50, onQuota: (q) => quotas.push(q.remaining), prepare: () => Promise.reject(new Error('bad spans')) });
    await expect(refused).rejects.toThrow('bad spans');
    expect(quotas).toEqual([98, 48, 98]);
    const tooMany = gate().ingest({ principal, count: 99, prepare: async () => [] });
    await expect(tooMany).rejects.toMatchObject({ status: 429, code: 'rate_limited' });
    expect((await ctx.container.metrics.eventsStored.get()).values[0]?.value).toBe(2);
  });
});
