import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../../../test/helpers/build-test-app.js';
import { event, newTelemetryOrg, postEvents, stampEventsWith } from '../../../test/helpers/telemetry-fixtures.js';
import { telemetryTestStores } from '../../../test/helpers/test-databases.js';

describe.each(telemetryTestStores)('telemetry store on %s', (dialect) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
    stampEventsWith(ctx.clock);
  });
  afterAll(() => ctx.close());

  const rename = (from: string, to: string) => sql`ALTER TABLE ${sql.table(from)} RENAME TO ${sql.table(to)}`.execute(ctx.testDb.db.kysely);
  const count = async (table: 'telemetry_events' | 'telemetry_rollups', orgId: string) => {
    const row = await ctx.testDb.db.kysely.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', orgId).executeTakeFirstOrThrow();
    return Number(row.n);
  };

  it('leaves nothing behind when the transaction fails part way, so a retry is counted once', async () => {
    const org = await newTelemetryOrg(ctx);
    const batch = [event(org.agentId), event(org.agentId, { policy_result: 'denied', deny_reason: 'rule-x' }), event(org.agentId)];
    expect((await postEvents(ctx, org.apiKey, [event(org.agentId, { deny_reason: 'warm-up' })])).statusCode).toBe(200);
    // The rule rollups are written last: events and agent rollups are already in the transaction.
    await rename('telemetry_rule_rollups', 'telemetry_rule_rollups_away');
    try {
      const failed = await postEvents(ctx, org.apiKey, batch);
      expect(failed.statusCode).toBe(500);
      expect(failed.json().error.code).toBe('internal_error');
    } finally {
      await rename('telemetry_rule_rollups_away', 'telemetry_rule_rollups');
    }
    expect(await count('telemetry_events', org.orgId)).toBe(1);
    const stats = await ctx.request({ method: 'GET', url: '/v1/dashboard/stats', token: org.token });
    expect(stats.json()).toMatchObject({ total_calls: 1, denied_calls: 0 });
    expect((await postEvents(ctx, org.apiKey, batch)).json()).toEqual({ accepted: 3 });
    expect((await postEvents(ctx, org.apiKey, batch)).json()).toEqual({ accepted: 3 });
    expect(await count('telemetry_events', org.orgId)).toBe(4);
    const after = await ctx.request({ method: 'GET', url: '/v1/dashboard/stats', token: org.token });
    expect(after.json()).toMatchObject({ total_calls: 4, denied_calls: 1 });
    const rules = await ctx.request({ method: 'GET', url: '/v1/dashboard/rule-hits', token: org.token });
    expect(rules.json()).toEqual([{ rule_name: 'rule-x', total: 1, denied: 1, dry_run: 0 }, { rule_name: 'warm-up', total: 1, denied: 0, dry_run: 1 }]);
  });

  it('keeps rollups exact when batches of one organization are stored concurrently', async () => {
    const org = await newTelemetryOrg(ctx);
    const batches = Array.from({ length: 6 }, (_, b) => Array.from({ length: 200 }, (_, i) => event(org.agentId, { latency_ms: b * 200 + i + 1 })));
    const shared = batches[0]!.slice(0, 50);
    const results = await Promise.all([...batches, shared].map((events) => postEvents(ctx, org.apiKey, events)));
    expect(results.every((r) => r.statusCode === 200)).toBe(true);
    const stats = (await ctx.request({ method: 'GET', url: '/v1/dashboard/stats', token: org.token })).json();
    expect(stats).toMatchObject({ total_calls: 1200, avg_latency_ms: 600.5 });
    expect(Math.abs(stats.p50_latency_ms - 600) / 600).toBeLessThanOrEqual(0.02);
    expect(await count('telemetry_events', org.orgId)).toBe(1200);
  });
});
