import type { Alert, AlertHistoryRecord, AlertNotification, AuditEntry, Page } from '@corral/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAlert, calls, getJson, MINUTE, send, SETTLE, toNextSlot } from '../../../test/helpers/alert-fixtures.js';
import { buildSecondContainer, buildTestContext, type TestContext } from '../../../test/helpers/build-test-app.js';
import { exactQuantile, newAgent, newTelemetryOrg, stampEventsWith, type TelemetryOrg, withinPercent } from '../../../test/helpers/telemetry-fixtures.js';
import { testDialects } from '../../../test/helpers/test-databases.js';

describe.each(testDialects)('alert evaluation on %s', (dialect) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
    stampEventsWith(ctx.clock);
  });
  afterAll(() => ctx.close());

  const evaluate = () => ctx.container.alertEvaluator.runOnce();
  const history = async (org: TelemetryOrg, id: string) => (await getJson<Page<AlertHistoryRecord>>(ctx, org.token, `/v1/alerts/${id}/history`)).data.reverse();
  const notifications = async (org: TelemetryOrg, id: string) => (await getJson<Page<AlertNotification>>(ctx, org.token, `/v1/alerts/${id}/notifications`)).data.reverse();
  const alertOf = (org: TelemetryOrg, id: string) => getJson<Alert>(ctx, org.token, `/v1/alerts/${id}`);

  it('computes error_rate and denied_rate in percent over whole minutes, fires at the threshold and resolves below it', async () => {
    const org = await newTelemetryOrg(ctx);
    const errors = await createAlert(ctx, org.token, org.agentId, { condition_type: 'error_rate', threshold: 25, window_minutes: 5 });
    const denials = await createAlert(ctx, org.token, org.agentId, { condition_type: 'denied_rate', threshold: 10, window_minutes: 5 });
    const t = toNextSlot(ctx);
    // Inside the window [t-5m, t): 30 allowed, 10 errors, 5 denied → 22.2% errors, 11.1% denied.
    await send(ctx, org.apiKey, [
      ...calls(org.agentId, t - 4 * MINUTE, 30),
      ...calls(org.agentId, t - 2 * MINUTE, 10, { policy_result: 'error', status_code: 502 }),
      ...calls(org.agentId, t - MINUTE, 5, { policy_result: 'denied', deny_reason: 'no-deletes' }),
      // Outside it: before the window, and in the minute after its end.
      ...calls(org.agentId, t - 6 * MINUTE, 100, { policy_result: 'error' }),
      ...calls(org.agentId, t + 1000, 100, { policy_result: 'error' }),
    ]);
    expect(await evaluate()).toMatchObject({ slot: t, evaluated: expect.any(Number) });
    expect((await alertOf(org, errors.id))).toMatchObject({ state: 'ok', last_value: expect.closeTo((10 / 45) * 100, 6), last_evaluated_at: new Date(t + SETTLE).toISOString() });
    const denied = await alertOf(org, denials.id);
    expect(denied).toMatchObject({ state: 'firing', last_value: expect.closeTo((5 / 45) * 100, 6), last_triggered_at: new Date(t + SETTLE).toISOString() });
    expect(await history(org, denials.id)).toEqual([expect.objectContaining({
      alert_id: denials.id, state: 'firing', value: expect.closeTo(11.111, 2), threshold: 10, condition_type: 'denied_rate',
      window_start: new Date(t - 5 * MINUTE).toISOString(), window_end: new Date(t).toISOString(), notification: 'queued', action: null,
    })]);
    expect(await history(org, errors.id)).toEqual([]);

    // Value exactly at the threshold fires; the next minute's errors push the error rate over 25%.
    ctx.clock.set(t + MINUTE + SETTLE);
    await send(ctx, org.apiKey, calls(org.agentId, t + 2000, 5, { policy_result: 'error' }));
    await evaluate();
    // Window [t-4m, t+1m): 30 allowed, 10 + 100 + 5 errors, 5 denied.
    expect(await alertOf(org, errors.id)).toMatchObject({ state: 'firing', last_value: expect.closeTo((115 / 150) * 100, 6) });

    // Once the errors leave the window, both resolve.
    ctx.clock.set(t + 7 * MINUTE + SETTLE);
    await send(ctx, org.apiKey, calls(org.agentId, t + 6 * MINUTE, 20));
    await evaluate();
    expect((await history(org, errors.id)).map((h) => [h.state, h.value])).toEqual([['firing', expect.closeTo(76.667, 2)], ['resolved', 0]]);
    expect((await history(org, denials.id)).map((h) => h.state)).toEqual(['firing', 'resolved']);
  });

  it('measures latency_p99 in ms from the rollup histograms, within 1% of the exact percentile', async () => {
    const org = await newTelemetryOrg(ctx);
    const rule = await createAlert(ctx, org.token, org.agentId, { condition_type: 'latency_p99', threshold: 2000, window_minutes: 10 });
    const t = toNextSlot(ctx);
    // 2% of the calls are slow, so the 99th percentile is one of them.
    const latencies = Array.from({ length: 500 }, (_, i) => (i % 50 === 0 ? 4000 + i : 20 + (i % 37) * 7));
    await send(ctx, org.apiKey, latencies.map((latency_ms, i) => calls(org.agentId, t - 9 * MINUTE + i * 1000, 1, { latency_ms })[0]!));
    await evaluate();
    const alert = await alertOf(org, rule.id);
    expect(alert.state).toBe('firing');
    expect(withinPercent(alert.last_value ?? 0, exactQuantile(latencies, 0.99), 1)).toBe(true);
  });

  it('measures volume_drop against the window before, and reads a quiet previous window as no drop', async () => {
    const org = await newTelemetryOrg(ctx);
    const rule = await createAlert(ctx, org.token, org.agentId, { condition_type: 'volume_drop', threshold: 50, window_minutes: 3 });
    const t = toNextSlot(ctx);
    await send(ctx, org.apiKey, calls(org.agentId, t - 2 * MINUTE, 40));
    await evaluate();
    expect(await alertOf(org, rule.id)).toMatchObject({ state: 'ok', last_value: 0 });

    // Previous window [t-2m, t+1m) has 40 calls, the window [t+1m, t+4m) has 12: a 70% drop.
    ctx.clock.set(t + 4 * MINUTE + SETTLE);
    await send(ctx, org.apiKey, calls(org.agentId, t + 2 * MINUTE, 12));
    await evaluate();
    expect(await alertOf(org, rule.id)).toMatchObject({ state: 'firing', last_value: 70 });
    // No calls at all in the next window: a 100% drop keeps it firing, without a second transition.
    ctx.clock.set(t + 7 * MINUTE + SETTLE);
    await evaluate();
    expect(await alertOf(org, rule.id)).toMatchObject({ state: 'firing', last_value: 100 });
    expect((await history(org, rule.id)).map((h) => h.state)).toEqual(['firing']);
  });

  it('keeps evaluating while muted and records transitions without notifying; after unmute the next transition notifies', async () => {
    const org = await newTelemetryOrg(ctx);
    const rule = await createAlert(ctx, org.token, org.agentId, { threshold: 50, window_minutes: 1, cooldown_minutes: 0 });
    const t = toNextSlot(ctx);
    const mute = await ctx.request({
      method: 'POST', url: `/v1/alerts/${rule.id}/mute`, token: org.token, payload: { until: new Date(t + 30 * MINUTE).toISOString(), reason: 'deploying' },
    });
    expect(mute.json()).toMatchObject({ muted_until: new Date(t + 30 * MINUTE).toISOString() });
    await send(ctx, org.apiKey, calls(org.agentId, t - MINUTE, 10, { policy_result: 'error' }));
    await evaluate();
    ctx.clock.set(t + MINUTE + SETTLE);
    await evaluate();
    expect(await alertOf(org, rule.id)).toMatchObject({ state: 'ok', last_value: 0, last_evaluated_at: new Date(t + MINUTE + SETTLE).toISOString() });
    expect((await history(org, rule.id)).map((h) => [h.state, h.notification])).toEqual([['firing', 'muted'], ['resolved', 'muted']]);
    expect(await notifications(org, rule.id)).toEqual([]);

    const unmuted = await ctx.request({ method: 'POST', url: `/v1/alerts/${rule.id}/unmute`, token: org.token });
    expect(unmuted.json().muted_until).toBeNull();
    ctx.clock.set(t + 3 * MINUTE + SETTLE);
    await send(ctx, org.apiKey, calls(org.agentId, t + 2 * MINUTE, 4, { policy_result: 'error' }));
    await evaluate();
    expect((await history(org, rule.id)).map((h) => h.notification)).toEqual(['muted', 'muted', 'queued']);
    expect(await notifications(org, rule.id)).toEqual([expect.objectContaining({ kind: 'firing', status: 'retrying', recipient: 'ops@example.com' })]);
    const audit = await getJson<Page<AuditEntry>>(ctx, org.token, `/v1/audit-log?target_id=${rule.id}`);
    expect(audit.data.map((e) => [e.action, e.reason])).toEqual([['alert.unmute', null], ['alert.mute', 'deploying'], ['alert.create', null]]);
  });

  it('sends nothing inside the cooldown after a notification, resolved transitions included, and notifies again after it', async () => {
    const org = await newTelemetryOrg(ctx);
    const rule = await createAlert(ctx, org.token, org.agentId, { threshold: 50, window_minutes: 1, cooldown_minutes: 10 });
    const t = toNextSlot(ctx);
    const flap = async (minute: number, failing: boolean) => {
      ctx.clock.set(t + minute * MINUTE + SETTLE);
      await send(ctx, org.apiKey, calls(org.agentId, t + (minute - 1) * MINUTE, 4, failing ? { policy_result: 'error' } : {}));
      await evaluate();
    };
    await flap(0, true); // firing, notified at t
    await flap(1, false); // resolved inside the cooldown
    await flap(2, true); // firing inside the cooldown
    await flap(10, false); // resolved at t+10m: the cooldown is over
    expect((await history(org, rule.id)).map((h) => [h.state, h.notification])).toEqual([
      ['firing', 'queued'], ['resolved', 'cooldown'], ['firing', 'cooldown'], ['resolved', 'queued'],
    ]);
    expect((await notifications(org, rule.id)).map((n) => n.kind)).toEqual(['firing', 'resolved']);
  });

  it('records one transition once, however late or often the rule is evaluated, across a restart', async () => {
    const org = await newTelemetryOrg(ctx);
    const rule = await createAlert(ctx, org.token, org.agentId, { threshold: 50, window_minutes: 15 });
    const t = toNextSlot(ctx);
    await send(ctx, org.apiKey, calls(org.agentId, t - 5 * MINUTE, 20, { policy_result: 'error' }));
    expect(await evaluate()).toMatchObject({ transitions: 1 });
    // The same slot again: the rule was claimed for it already.
    expect(await evaluate()).toMatchObject({ evaluated: 0, transitions: 0 });
    // A second process on the same store, starting 9 minutes late: the errors are still in the window.
    const restarted = await buildSecondContainer(ctx.testDb.db, ctx.clock);
    try {
      ctx.clock.set(t + 9 * MINUTE + SETTLE + 3000);
      expect(await restarted.alertEvaluator.runOnce()).toMatchObject({ slot: t + 9 * MINUTE, transitions: 0 });
      expect(await evaluate()).toMatchObject({ evaluated: 0 });
    } finally {
      await restarted.close();
    }
    expect((await history(org, rule.id)).map((h) => h.state)).toEqual(['firing']);
    expect(await notifications(org, rule.id)).toHaveLength(1);
    expect(await alertOf(org, rule.id)).toMatchObject({ state: 'firing', last_evaluated_at: new Date(t + 9 * MINUTE + SETTLE + 3000).toISOString() });
  });

  it('lets exactly one of two evaluators sharing the store act on each rule', async () => {
    const org = await newTelemetryOrg(ctx);
    const rules = [];
    for (let i = 0; i < 40; i++) rules.push(await createAlert(ctx, org.token, org.agentId, { threshold: 10 + i, window_minutes: 2 }));
    const t = toNextSlot(ctx);
    await send(ctx, org.apiKey, calls(org.agentId, t - MINUTE, 10, { policy_result: 'error' }));
    const other = await buildSecondContainer(ctx.testDb.db, ctx.clock);
    try {
      // Every enabled rule of a live agent is due (earlier tests' too); each must be evaluated once in all.
      const due = await ctx.testDb.db.kysely.selectFrom('alert_rules').innerJoin('agents', (j) => j.onRef('agents.id', '=', 'alert_rules.agent_id'))
        .select((eb) => eb.fn.countAll<number>().as('n')).where('is_enabled', '=', 1).where('agents.deleted_at', 'is', null).executeTakeFirstOrThrow();
      const results = await Promise.all([evaluate(), other.alertEvaluator.runOnce(), evaluate(), other.alertEvaluator.runOnce()]);
      expect(results.reduce((n, r) => n + r.evaluated, 0)).toBe(Number(due.n));
      expect(results.reduce((n, r) => n + r.transitions, 0)).toBeGreaterThanOrEqual(40);
    } finally {
      await other.close();
    }
    for (const rule of rules) {
      expect((await history(org, rule.id)).map((h) => h.state), rule.id).toEqual(['firing']);
      expect(await notifications(org, rule.id), rule.id).toHaveLength(1);
    }
  });

  it("engages the agent's kill switch as the alert when a kill_switch rule fires; only a person releases it", async () => {
    const org = await newTelemetryOrg(ctx);
    const heard: string[] = [];
    ctx.container.controlBus.subscribe((m) => {
      if (m.kind === 'agent_changed' && m.agentId === org.agentId) heard.push(m.kind);
    });
    const rule = await createAlert(ctx, org.token, org.agentId, { threshold: 50, window_minutes: 1, action: 'kill_switch', cooldown_minutes: 0 });
    const t = toNextSlot(ctx);
    await send(ctx, org.apiKey, calls(org.agentId, t - MINUTE, 10, { policy_result: 'error' }));
    await evaluate();

    const state = await ctx.request({ method: 'GET', url: `/v1/agents/${org.agentId}/control/state`, apiKey: org.apiKey });
    expect(state.json()).toMatchObject({ kill_switch_active: true });
    expect(heard).toEqual(['agent_changed']);
    expect(await history(org, rule.id)).toEqual([expect.objectContaining({ state: 'firing', action: 'kill_switch_engaged' })]);
    const audit = await getJson<Page<AuditEntry>>(ctx, org.token, `/v1/audit-log?target_id=${org.agentId}&action=agent.kill_switch`);
    expect(audit.data).toEqual([expect.objectContaining({
      actor_type: 'alert', actor_id: rule.id, details: { active: true, previous: false }, reason: expect.stringContaining('error rate 100%'),
    })]);

    // Resolving leaves the switch engaged; an API key cannot release it, a person can.
    ctx.clock.set(t + MINUTE + SETTLE);
    await evaluate();
    expect((await alertOf(org, rule.id)).state).toBe('ok');
    const byKey = await ctx.request({ method: 'POST', url: `/v1/agents/${org.agentId}/kill-switch`, apiKey: org.apiKey, payload: { active: false } });
    expect(byKey.statusCode).toBe(403);
    expect((await ctx.request({ method: 'GET', url: `/v1/agents/${org.agentId}`, token: org.token })).json().kill_switch_active).toBe(true);
    const byPerson = await ctx.request({ method: 'POST', url: `/v1/agents/${org.agentId}/kill-switch`, token: org.token, payload: { active: false, reason: 'fixed' } });
    expect(byPerson.json().kill_switch_active).toBe(false);

    // The next firing engages it again.
    ctx.clock.set(t + 3 * MINUTE + SETTLE);
    await send(ctx, org.apiKey, calls(org.agentId, t + 2 * MINUTE, 3, { policy_result: 'error' }));
    await evaluate();
    expect((await ctx.request({ method: 'GET', url: `/v1/agents/${org.agentId}`, token: org.token })).json().kill_switch_active).toBe(true);
  });

  it('skips disabled rules and rules whose agent was deleted', async () => {
    const org = await newTelemetryOrg(ctx);
    const second = await newAgent(ctx, org.token);
    const disabled = await createAlert(ctx, org.token, org.agentId, { threshold: 1, window_minutes: 1 });
    const orphaned = await createAlert(ctx, org.token, second, { condition_type: 'volume_drop', threshold: 10, window_minutes: 1 });
    await ctx.request({ method: 'POST', url: `/v1/alerts/${disabled.id}/toggle`, token: org.token, payload: { is_enabled: false } });
    const t = toNextSlot(ctx);
    await send(ctx, org.apiKey, [...calls(org.agentId, t - MINUTE, 5, { policy_result: 'error' }), ...calls(second, t - 2 * MINUTE, 5)]);
    await ctx.request({ method: 'DELETE', url: `/v1/agents/${second}`, token: org.token });
    await evaluate();
    expect(await alertOf(org, disabled.id)).toMatchObject({ is_enabled: false, state: 'ok', last_evaluated_at: null });
    expect(await alertOf(org, orphaned.id)).toMatchObject({ state: 'ok', last_evaluated_at: null, agent_name: expect.any(String) });
  });
});
