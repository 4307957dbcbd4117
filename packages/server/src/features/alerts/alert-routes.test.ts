import type { Alert, AuditEntry, Page } from '@corral/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAlert, getJson } from '../../../test/helpers/alert-fixtures.js';
import { buildTestContext, type TestContext } from '../../../test/helpers/build-test-app.js';
import { newAgent, newTelemetryOrg, type TelemetryOrg } from '../../../test/helpers/telemetry-fixtures.js';
import { testDialects } from '../../../test/helpers/test-databases.js';

describe.each(testDialects)('alert rules API on %s', (dialect) => {
  let ctx: TestContext;
  let org: TelemetryOrg;
  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
    org = await newTelemetryOrg(ctx);
  });
  afterAll(() => ctx.close());

  const post = (url: string, payload?: object, token = org.token) => ctx.request({ method: 'POST', url, token, ...(payload ? { payload } : {}) });
  const rule = (body: Record<string, unknown> = {}) => ({
    agent_id: org.agentId, condition_type: 'error_rate', threshold: 5, channel: 'email', channel_target: 'ops@example.com', ...body,
  });

  it('creates a rule with the interface defaults, its agent named, and shows a webhook secret once', async () => {
    const agentName = (await getJson<{ name: string }>(ctx, org.token, `/v1/agents/${org.agentId}`)).name;
    const email = await post('/v1/alerts', rule());
    expect(email.statusCode).toBe(200);
    expect(email.json()).toEqual({
      id: expect.any(String), org_id: org.orgId, agent_id: org.agentId, agent_name: agentName, condition_type: 'error_rate', threshold: 5,
      window_minutes: 15, channel: 'email', channel_target: 'ops@example.com', cooldown_minutes: 60, action: null, notification_count: 0,
      is_enabled: true, state: 'ok', last_value: null, last_evaluated_at: null, last_triggered_at: null, muted_until: null,
      created_at: expect.any(String), updated_at: expect.any(String),
    });
    const hook = await post('/v1/alerts', rule({ channel: 'webhook', channel_target: 'https://hooks.example.com/corral', window_minutes: 30, cooldown_minutes: 0 }));
    expect(hook.json()).toMatchObject({ window_minutes: 30, cooldown_minutes: 0, webhook_secret: expect.stringMatching(/^whsec_/) });
    expect(JSON.stringify(await getJson(ctx, org.token, `/v1/alerts/${hook.json().id}`))).not.toContain('whsec_');
    expect(JSON.stringify(await getJson(ctx, org.token, '/v1/alerts'))).not.toContain('whsec_');
  });

  it('lists rules newest first with the list envelope, each with its agent name, and pages by cursor', async () => {
    const { token } = await ctx.newOrg();
    const agentId = await newAgent(ctx, token, 'Paged Bot');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createAlert(ctx, token, agentId, { threshold: i + 1 })).id);
    const first = await getJson<Page<Alert>>(ctx, token, '/v1/alerts?limit=3');
    expect(first).toMatchObject({ has_more: true, next_cursor: ids[2] });
    expect(first.data.map((a) => a.id)).toEqual([ids[4], ids[3], ids[2]]);
    expect(first.data.every((a) => a.agent_name === 'Paged Bot')).toBe(true);
    const second = await getJson<Page<Alert>>(ctx, token, `/v1/alerts?limit=3&cursor=${first.next_cursor}`);
    expect(second).toEqual({ data: [expect.objectContaining({ id: ids[1] }), expect.objectContaining({ id: ids[0] })], has_more: false, next_cursor: null });
  });

  it('refuses bad rules with 400 invalid_value naming each field', async () => {
    const { token: otherToken } = await ctx.newOrg();
    const foreignAgent = await newAgent(ctx, otherToken);
    const deleted = await newAgent(ctx, org.token);
    await ctx.request({ method: 'DELETE', url: `/v1/agents/${deleted}`, token: org.token });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ threshold: 0 }, 'threshold'],
      [{ threshold: -3 }, 'threshold'],
      [{ threshold: 100.5 }, 'threshold'],
      [{ condition_type: 'volume_drop', threshold: 250 }, 'threshold'],
      [{ condition_type: 'latency_p99', threshold: 3_600_001 }, 'threshold'],
      [{ condition_type: 'cpu' }, 'condition_type'],
      [{ channel: 'sms' }, 'channel'],
      [{ channel_target: 'not an address' }, 'channel_target'],
      [{ channel_target: 'ops@localhost' }, 'channel_target'],
      [{ channel_target: 'a\r\nBcc: x@example.com' }, 'channel_target'],
      [{ channel: 'webhook', channel_target: 'ops@example.com' }, 'channel_target'],
      [{ channel: 'webhook', channel_target: 'ftp://example.com/hook' }, 'channel_target'],
      [{ channel: 'webhook', channel_target: 'https://user:pw@example.com/hook' }, 'channel_target'],
      [{ window_minutes: 0 }, 'window_minutes'],
      [{ window_minutes: 1441 }, 'window_minutes'],
      [{ window_minutes: 2.5 }, 'window_minutes'],
      [{ cooldown_minutes: -1 }, 'cooldown_minutes'],
      [{ cooldown_minutes: 10_081 }, 'cooldown_minutes'],
      [{ action: 'page_everyone' }, 'action'],
      [{ agent_id: foreignAgent }, 'agent_id'],
      [{ agent_id: deleted }, 'agent_id'],
    ];
    for (const [body, field] of cases) {
      const res = await post('/v1/alerts', rule(body));
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error, JSON.stringify(body)).toMatchObject({ code: 'invalid_value', details: expect.arrayContaining([expect.objectContaining({ field })]) });
    }
    expect((await post('/v1/alerts', rule({ condition_type: 'latency_p99', threshold: 2500 }))).statusCode).toBe(200);
  });

  it('updates only the fields sent, judges the result as a whole, and makes a secret when a rule becomes a webhook', async () => {
    const created = await createAlert(ctx, org.token, org.agentId, { condition_type: 'latency_p99', threshold: 800 });
    const put = (payload: object) => ctx.request({ method: 'PUT', url: `/v1/alerts/${created.id}`, token: org.token, payload });
    expect((await put({ threshold: 1200, cooldown_minutes: 5 })).json()).toMatchObject({ condition_type: 'latency_p99', threshold: 1200, cooldown_minutes: 5, window_minutes: 5 });
    // 1200 is no percentage: switching the condition alone is refused.
    expect((await put({ condition_type: 'error_rate' })).json().error).toMatchObject({ code: 'invalid_value', details: [expect.objectContaining({ field: 'threshold' })] });
    expect((await put({ channel: 'webhook' })).json().error.details).toEqual([expect.objectContaining({ field: 'channel_target' })]);
    const moved = await put({ channel: 'webhook', channel_target: 'https://hooks.example.com/x' });
    expect(moved.json()).toMatchObject({ channel: 'webhook', webhook_secret: expect.stringMatching(/^whsec_/) });
    expect((await put({ channel_target: 'https://hooks.example.com/y' })).json().webhook_secret).toBeUndefined();
    const back = await put({ channel: 'email', channel_target: 'ops@example.com' });
    expect(back.json()).toMatchObject({ channel: 'email' });
    expect((await post(`/v1/alerts/${created.id}/rotate-secret`)).json().error).toMatchObject({ code: 'invalid_value' });
  });

  it('toggles, mutes until a future time with a reason, unmutes, and audits each change', async () => {
    const created = await createAlert(ctx, org.token, org.agentId);
    const until = new Date(ctx.clock.now() + 3_600_000).toISOString();
    expect((await post(`/v1/alerts/${created.id}/toggle`, { is_enabled: false })).json()).toMatchObject({ is_enabled: false });
    expect((await post(`/v1/alerts/${created.id}/toggle`, { is_enabled: true })).json()).toMatchObject({ is_enabled: true });
    expect((await post(`/v1/alerts/${created.id}/mute`, { until, reason: 'maintenance window' })).json()).toMatchObject({ muted_until: until });
    for (const bad of [new Date(ctx.clock.now() - 1000).toISOString(), new Date(ctx.clock.now() + 366 * 86_400_000).toISOString(), 'tomorrow']) {
      const res = await post(`/v1/alerts/${created.id}/mute`, { until: bad });
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().error.details).toEqual([expect.objectContaining({ field: 'until' })]);
    }
    expect((await post(`/v1/alerts/${created.id}/unmute`)).json()).toMatchObject({ muted_until: null });
    const audit = await getJson<Page<AuditEntry>>(ctx, org.token, `/v1/audit-log?target_id=${created.id}`);
    expect(audit.data.map((e) => [e.action, e.reason, e.details])).toEqual([
      ['alert.unmute', null, { previous: until }],
      ['alert.mute', 'maintenance window', { until, previous: null }],
      ['alert.toggle', null, { is_enabled: true, previous: false }],
      ['alert.toggle', null, { is_enabled: false, previous: true }],
      ['alert.create', null, expect.objectContaining({ condition_type: 'error_rate', channel: 'email' })],
    ]);
  });

  it('deletes a rule with its history and notifications (admin+), after which it is a 404', async () => {
    const created = await createAlert(ctx, org.token, org.agentId);
    await post(`/v1/alerts/${created.id}/test`);
    const member = await ctx.token({ orgId: org.orgId, role: 'member' });
    expect((await ctx.request({ method: 'DELETE', url: `/v1/alerts/${created.id}`, token: member })).statusCode).toBe(403);
    expect((await ctx.request({ method: 'DELETE', url: `/v1/alerts/${created.id}`, token: org.token })).json()).toEqual({ success: true });
    for (const url of [`/v1/alerts/${created.id}`, `/v1/alerts/${created.id}/history`, `/v1/alerts/${created.id}/notifications`]) {
      expect((await ctx.request({ method: 'GET', url, token: org.token })).statusCode, url).toBe(404);
    }
    const left = await ctx.testDb.db.kysely.selectFrom('alert_notifications').select('id').where('alert_id', '=', created.id).execute();
    expect(left).toEqual([]);
  });

  it('lets viewers read only; keys follow their alerts scope; the kill_switch action takes a person at admin or above', async () => {
    const viewer = await ctx.token({ orgId: org.orgId, role: 'viewer' });
    const member = await ctx.token({ orgId: org.orgId, role: 'member' });
    const admin = await ctx.token({ orgId: org.orgId, role: 'admin' });
    expect((await ctx.request({ method: 'GET', url: '/v1/alerts', token: viewer })).statusCode).toBe(200);
    expect((await post('/v1/alerts', rule(), viewer)).statusCode).toBe(403);
    expect((await post('/v1/alerts', rule(), member)).statusCode).toBe(200);

    const refused = await post('/v1/alerts', rule({ action: 'kill_switch' }), member);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error).toMatchObject({ code: 'forbidden', message: expect.stringContaining('admin') });
    const armed = await post('/v1/alerts', rule({ action: 'kill_switch' }), admin);
    expect(armed.json()).toMatchObject({ action: 'kill_switch' });
    // A member may still tune an armed rule, but not disarm it.
    const tune = await ctx.request({ method: 'PUT', url: `/v1/alerts/${armed.json().id}`, token: member, payload: { threshold: 9 } });
    expect(tune.json()).toMatchObject({ threshold: 9, action: 'kill_switch' });
    expect((await ctx.request({ method: 'PUT', url: `/v1/alerts/${armed.json().id}`, token: member, payload: { action: null } })).statusCode).toBe(403);

    const writer = await ctx.createKey(org.token, { kind: 'restricted', resources: { alerts: 'write' } });
    const reader = await ctx.createKey(org.token, { kind: 'restricted', resources: { alerts: 'read' } });
    const byKey = (key: string, body: object) => ctx.request({ method: 'POST', url: '/v1/alerts', apiKey: key, payload: body });
    expect((await byKey(writer.key, rule())).statusCode).toBe(200);
    const keyAction = await byKey(writer.key, rule({ action: 'kill_switch' }));
    expect(keyAction.statusCode).toBe(403);
    expect(keyAction.json().error.message).toMatch(/API keys cannot/);
    expect((await byKey(reader.key, rule())).statusCode).toBe(403);
    expect((await ctx.request({ method: 'GET', url: '/v1/alerts', apiKey: reader.key })).statusCode).toBe(200);
  });
});
