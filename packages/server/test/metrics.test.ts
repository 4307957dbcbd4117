import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calls, createAlert, MINUTE, send, SETTLE, toNextSlot } from './helpers/alert-fixtures.js';
import { buildTestContext, type TestContext } from './helpers/build-test-app.js';
import { newTelemetryOrg } from './helpers/telemetry-fixtures.js';
import { testDialects } from './helpers/test-databases.js';

/** The value of one series in Prometheus text: `name` or `name{labels}`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/**
 * Each operational signal of docs/operations.md ("Metrics"), scraped from /metrics after the
 * activity it measures: ingest, a control stream, an alert evaluation and a failed delivery.
 */
describe.each(testDialects)('/metrics on %s', (dialect) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
    await ctx.api.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => ctx.close());

  it('exports ingest rate, batch latency, stream counts, evaluation lag, outbox depth and delivery failures', async () => {
    const scrape = async () => (await ctx.request({ method: 'GET', url: '/metrics' })).body;
    const before = await scrape();
    expect(sample(before, 'corral_control_streams')).toBe(0);
    expect(sample(before, 'corral_alert_outbox_depth')).toBe(0);
    expect(sample(before, 'corral_telemetry_batch_duration_seconds_count')).toBe(0);

    const org = await newTelemetryOrg(ctx);
    const boundary = toNextSlot(ctx);
    // 30 calls, all failing, in the minute after `boundary`; one email rule with no SMTP server configured.
    await send(ctx, org.apiKey, calls(org.agentId, boundary + 1_000, 30, { policy_result: 'error', status_code: 502 }));
    await createAlert(ctx, org.token, org.agentId, { window_minutes: 1 });

    const { port } = ctx.api.server.address() as AddressInfo;
    const stream = await fetch(`http://127.0.0.1:${port}/v1/agents/${org.agentId}/control`, { headers: { 'x-api-key': org.apiKey } });
    const reader = stream.body!.getReader();
    let opening = '';
    while (!opening.includes('event: init')) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended: ${opening}`);
      opening += Buffer.from(value).toString();
    }

    // The round for the minute runs 2.5 s after it became due.
    ctx.clock.set(boundary + MINUTE + SETTLE + 2_500);
    expect(await ctx.container.alertEvaluator.runOnce()).toMatchObject({ transitions: 1 });
    const afterEvaluation = await scrape();
    expect(sample(afterEvaluation, 'corral_alert_outbox_depth')).toBe(1);
    expect(await ctx.container.alertDispatcher.runOnce()).toBe(1);

    const after = await scrape();
    expect(sample(after, 'corral_telemetry_events_received_total')).toBe(30);
    expect(sample(after, 'corral_telemetry_events_stored_total')).toBe(30);
    expect(sample(after, 'corral_telemetry_batch_duration_seconds_count')).toBe(1);
    expect(sample(after, 'corral_telemetry_batch_duration_seconds_sum')).toBeGreaterThan(0);
    expect(sample(after, 'corral_control_streams')).toBe(1);
    expect(sample(after, 'corral_alert_evaluation_rounds_total')).toBe(1);
    expect(sample(after, 'corral_alert_evaluation_lag_seconds')).toBe(2.5);
    // Without SMTP the email cannot go: one failed attempt, to be retried, and the row stays in the outbox.
    expect(sample(after, 'corral_alert_delivery_attempts_total{outcome="retrying"}')).toBe(1);
    expect(sample(after, 'corral_alert_outbox_depth')).toBe(1);

    // Every series of the service's own is documented in docs/operations.md.
    const documented = readFileSync(path.resolve(import.meta.dirname, '../../../docs/operations.md'), 'utf8');
    const names = new Set([...after.matchAll(/^# TYPE (corral_\w+) /gm)].map((m) => m[1] ?? ''));
    expect(names.size).toBeGreaterThanOrEqual(11);
    expect([...names].filter((n) => !documented.includes(`\`${n}\``))).toEqual([]);

    await reader.cancel();
    for (let i = 0; i < 100 && sample(await scrape(), 'corral_control_streams') !== 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(sample(await scrape(), 'corral_control_streams')).toBe(0);
  });
});
