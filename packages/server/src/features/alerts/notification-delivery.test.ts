import type { AlertNotification, Page, WebhookPayload } from '@corral/contracts';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { Webhook } from 'standardwebhooks';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAlert, calls, getJson, MINUTE, send, toNextSlot } from '../../../test/helpers/alert-fixtures.js';
import { buildSecondContainer, buildTestContext, type TestContext } from '../../../test/helpers/build-test-app.js';
import { newTelemetryOrg, stampEventsWith, type TelemetryOrg } from '../../../test/helpers/telemetry-fixtures.js';
import { testDialects } from '../../../test/helpers/test-databases.js';
import { type ReceivedRequest, startWebhookReceiver, type WebhookReceiver } from '../../../test/helpers/webhook-receiver.js';

interface CapturedMail {
  from: string;
  to: string[];
  raw: string;
}

/** A real SMTP server (smtp-server) that keeps every message it accepts. */
async function startSmtpServer(): Promise<{ url: string; mails: CapturedMail[]; close(): Promise<void> }> {
  const mails: CapturedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      let raw = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => (raw += chunk));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return { url: `smtp://127.0.0.1:${port}`, mails, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Fails when the request's signatures do not verify with `secret` (Standard Webhooks' own library). */
const verify = (secret: string, r: ReceivedRequest) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as WebhookPayload;

describe.each(testDialects)('notification delivery on %s', (dialect) => {
  let ctx: TestContext;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let receiver: WebhookReceiver;
  const random = { value: 0.5 };

  beforeAll(async () => {
    smtp = await startSmtpServer();
    receiver = await startWebhookReceiver();
    ctx = await buildTestContext(dialect, {
      container: {
        alerts: {
          smtpUrl: smtp.url, smtpFrom: 'Corral Alerts <alerts@corral.test>', webhookAllowPrivate: true, publicUrl: 'https://corral.example.com',
          timeoutMs: 400, random: () => random.value,
        },
      },
    });
    stampEventsWith(ctx.clock);
  });
  afterAll(async () => {
    await ctx.close();
    await receiver.stop();
    await smtp.close();
  });

  const dispatch = () => ctx.container.alertDispatcher.runOnce();
  /** A URL of the receiver for one test: earlier tests' rules resolve and notify the receiver too. */
  const hook = (name: string) => ({
    url: `${receiver.url}?case=${name}`,
    requests: () => receiver.requests.filter((r) => r.url.endsWith(`?case=${name}`)),
  });
  const notifications = async (org: TelemetryOrg, id: string) => (await getJson<Page<AlertNotification>>(ctx, org.token, `/v1/alerts/${id}/notifications`)).data;

  /** A rule that fires at the next slot (all calls erroring), evaluated; answers it and its org. */
  async function firingRule(body: Record<string, unknown>) {
    const org = await newTelemetryOrg(ctx);
    const rule = await createAlert(ctx, org.token, org.agentId, { threshold: 50, window_minutes: 5, ...body });
    const t = toNextSlot(ctx);
    await send(ctx, org.apiKey, calls(org.agentId, t - MINUTE, 8, { policy_result: 'error', status_code: 503 }));
    await ctx.container.alertEvaluator.runOnce();
    return { org, rule, t };
  }

  it('ends delivered after a receiver answers 429, goes down, answers 500, is too slow, and recovers; every attempt recorded', async () => {
    const answers = [
      { status: 429, headers: { 'retry-after': '120' }, body: 'slow down' },
      { status: 500, body: 'boom' },
      { status: 200, delayMs: 1500 },
      { status: 204 },
    ];
    let next = 0;
    receiver.answer = () => answers[next++] ?? { status: 200 };
    receiver.requests.length = 0;
    const { org, rule } = await firingRule({ channel: 'webhook', channel_target: receiver.url });
    const secret = rule.webhook_secret ?? '';
    const step = async () => {
      const [pending] = await notifications(org, rule.id);
      ctx.clock.set(Date.parse(pending?.next_attempt_at ?? ''));
      await dispatch();
    };

    await dispatch(); // 429 with Retry-After: 120
    let [n] = await notifications(org, rule.id);
    const firstAt = Date.parse(n?.attempt_log[0]?.at ?? '');
    // Retry-After (120 s) outweighs the schedule's 5 s.
    expect(Date.parse(n?.next_attempt_at ?? '') - firstAt).toBe(120_000);
    await receiver.stop(); // down
    await step();
    await receiver.start();
    await step(); // 500
    await step(); // slower than the timeout
    await step(); // 204
    [n] = await notifications(org, rule.id);
    expect(n).toMatchObject({ kind: 'firing', channel: 'webhook', recipient: receiver.url, status: 'delivered', attempts: 5, error: null, next_attempt_at: null });
    expect(n?.attempt_log.map((a) => [a.attempt, a.status, a.http_status])).toEqual([
      [1, 'retrying', 429], [2, 'retrying', null], [3, 'retrying', 500], [4, 'retrying', null], [5, 'delivered', 204],
    ]);
    expect(n?.attempt_log[1]?.error).toMatch(/ECONNREFUSED/);
    expect(n?.attempt_log[2]?.error).toBe('HTTP 500: boom');
    expect(n?.attempt_log[3]?.error).toBe('timed out after 0.4 s');
    // The schedule after attempts 2, 3 and 4 (random pinned at 0.5, so no jitter): 5 min, 30 min, 2 h.
    const gaps = n!.attempt_log.slice(1).map((a, i) => Date.parse(a.at) - Date.parse(n!.attempt_log[i]!.at));
    expect(gaps).toEqual([120_000, 5 * MINUTE, 30 * MINUTE, 120 * MINUTE]);
    expect((await getJson<{ notification_count: number }>(ctx, org.token, `/v1/alerts/${rule.id}`)).notification_count).toBe(1);

    // The receiver saw four requests (none while down): one message id, one body, each signed.
    expect(receiver.requests).toHaveLength(4);
    expect(new Set(receiver.requests.map((r) => r.headers['webhook-id']))).toEqual(new Set([n?.id]));
    expect(new Set(receiver.requests.map((r) => r.body)).size).toBe(1);
    for (const r of receiver.requests) expect(verify(secret, r)).toMatchObject({ type: 'alert.firing' });
    const payload = verify(secret, receiver.requests[3]!);
    expect(payload).toMatchObject({
      type: 'alert.firing',
      data: {
        org_id: org.orgId, state: 'firing', value: 100, threshold: 50, unit: 'percent',
        alert: { id: rule.id, condition_type: 'error_rate', threshold: 50, window_minutes: 5, action: null },
        agent: { id: org.agentId, name: expect.any(String), url: `https://corral.example.com/v1/agents/${org.agentId}` },
        history_id: expect.any(String), summary: expect.stringContaining('error rate 100% ≥ 50% over the last 5 minutes'),
      },
    });
    expect(receiver.requests[0]?.headers).toMatchObject({ 'content-type': 'application/json', 'user-agent': 'Corral-Webhooks/1' });
  });

  it('gives up after eight attempts over the Svix schedule, with jitter, and says why', async () => {
    receiver.answer = () => ({ status: 503 });
    random.value = 0.999;
    try {
      const { org, rule } = await firingRule({ channel: 'webhook', channel_target: receiver.url });
      for (let i = 0; i < 8; i++) {
        const [pending] = await notifications(org, rule.id);
        if (pending?.next_attempt_at) ctx.clock.set(Date.parse(pending.next_attempt_at));
        await dispatch();
      }
      const [n] = await notifications(org, rule.id);
      expect(n).toMatchObject({ status: 'failed', attempts: 8, error: 'HTTP 503', next_attempt_at: null });
      expect(n?.attempt_log.map((a) => a.status)).toEqual([...Array(7).fill('retrying'), 'failed']);
      const gaps = n!.attempt_log.slice(1).map((a, i) => Date.parse(a.at) - Date.parse(n!.attempt_log[i]!.at));
      const schedule = [5_000, 5 * MINUTE, 30 * MINUTE, 120 * MINUTE, 300 * MINUTE, 600 * MINUTE, 600 * MINUTE];
      // random ≈ 1 spreads each wait to just under +20%.
      gaps.forEach((gap, i) => expect(gap / schedule[i]!).toBeCloseTo(1.2, 2));
      expect(await dispatch()).toBe(0);
    } finally {
      random.value = 0.5;
      receiver.answer = () => ({ status: 200 });
    }
  });

  it('emails through a real SMTP server: what fired, the value, the window and a link to the agent, in text and HTML', async () => {
    smtp.mails.length = 0;
    const { org, rule, t } = await firingRule({ channel: 'email', channel_target: 'oncall@example.com', condition_type: 'error_rate', threshold: 40 });
    // Earlier tests' rules resolve meanwhile and notify their own channels; this rule's mail is the one to oncall@.
    await dispatch();
    const mine = smtp.mails.filter((m) => m.to.includes('oncall@example.com'));
    expect(mine).toHaveLength(1);
    const mail = mine[0]!;
    expect(mail).toMatchObject({ from: 'alerts@corral.test', to: ['oncall@example.com'] });
    const parsed = await simpleParser(mail.raw);
    const agentName = (await getJson<{ name: string }>(ctx, org.token, `/v1/agents/${org.agentId}`)).name;
    expect(parsed.subject).toBe(`[Corral] FIRING: error_rate 100% on ${agentName}`);
    const link = `https://corral.example.com/v1/agents/${org.agentId}`;
    const window = `${new Date(t - 5 * MINUTE).toISOString()} to ${new Date(t).toISOString()} (5 min)`;
    for (const expected of [`Firing on ${agentName}: error rate 100% ≥ 40% over the last 5 minutes`, 'Value: 100%', 'Threshold: 40%', `Window: ${window}`, `Agent: ${link}`]) {
      expect(parsed.text).toContain(expected);
    }
    expect(parsed.html).toContain(`<a href="${link}">Open the agent</a>`);
    expect(parsed.html).toContain(window);
    expect(parsed.messageId).toMatch(/@corral\.test>$/);
    expect((await notifications(org, rule.id))[0]).toMatchObject({ status: 'delivered', attempts: 1, attempt_log: [expect.objectContaining({ status: 'delivered', http_status: null })] });
  });

  it('keeps an email it could not send in the outbox, saying why, when SMTP is not configured', async () => {
    const bare = await buildSecondContainer(ctx.testDb.db, ctx.clock);
    try {
      const { org, rule } = await firingRule({ channel: 'email', channel_target: 'oncall@example.com' });
      await bare.alertDispatcher.runOnce();
      expect((await notifications(org, rule.id))[0]).toMatchObject({
        status: 'retrying', attempts: 1, error: 'email is not configured: set CORRAL_SMTP_URL', next_attempt_at: expect.any(String),
      });
      // The next attempt, by a dispatcher that has SMTP, delivers it.
      ctx.clock.advance(10_000);
      await dispatch();
      expect((await notifications(org, rule.id))[0]).toMatchObject({ status: 'delivered', attempts: 2 });
    } finally {
      await bare.close();
    }
  });

  it('delivers each notification once when two dispatchers share the store', async () => {
    receiver.answer = () => ({ status: 200, delayMs: 20 });
    const target = hook('two-dispatchers');
    const org = await newTelemetryOrg(ctx);
    for (let i = 0; i < 12; i++) await createAlert(ctx, org.token, org.agentId, { threshold: 10 + i, channel: 'webhook', channel_target: target.url });
    const t = toNextSlot(ctx);
    await send(ctx, org.apiKey, calls(org.agentId, t - MINUTE, 5, { policy_result: 'error' }));
    await ctx.container.alertEvaluator.runOnce();
    const other = await buildSecondContainer(ctx.testDb.db, ctx.clock, { alerts: { webhookAllowPrivate: true } });
    try {
      await Promise.all([dispatch(), other.alertDispatcher.runOnce(), dispatch(), other.alertDispatcher.runOnce()]);
    } finally {
      await other.close();
    }
    const ids = target.requests().map((r) => r.headers['webhook-id']);
    expect(ids).toHaveLength(12);
    expect(new Set(ids).size).toBe(12);
    receiver.answer = () => ({ status: 200 });
  });

  it('takes a notification up again once the claim of a dispatcher that died has lapsed, and delivers it once', async () => {
    const target = hook('lapsed-claim');
    const { org, rule } = await firingRule({ channel: 'webhook', channel_target: target.url });
    // A dispatcher claims the row and dies before its attempt.
    const now = ctx.clock.now();
    const claimed = await ctx.testDb.db.kysely.updateTable('alert_notifications').set({ claim_id: 'dead-dispatcher', claimed_until: now + 120_000 })
      .where('alert_id', '=', rule.id).returning('id').execute();
    expect(claimed).toHaveLength(1);
    await dispatch();
    expect(target.requests()).toHaveLength(0);
    ctx.clock.set(now + 120_000);
    await dispatch();
    await dispatch();
    expect(target.requests()).toHaveLength(1);
    expect((await notifications(org, rule.id))[0]).toMatchObject({ status: 'delivered', attempts: 1 });
  });

  it('signs with the old and the new secret for a day after a rotation, then with the new one only', async () => {
    const target = hook('rotation');
    const org = await newTelemetryOrg(ctx);
    const rule = await createAlert(ctx, org.token, org.agentId, { channel: 'webhook', channel_target: target.url });
    const oldSecret = rule.webhook_secret ?? '';
    expect(oldSecret).toMatch(/^whsec_[A-Za-z0-9+/=]{44}$/);
    const rotated = await ctx.request({ method: 'POST', url: `/v1/alerts/${rule.id}/rotate-secret`, token: org.token });
    const newSecret = rotated.json().webhook_secret as string;
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(oldSecret);
    expect((await getJson<Record<string, unknown>>(ctx, org.token, `/v1/alerts/${rule.id}`)).webhook_secret).toBeUndefined();

    const test = async () => ctx.request({ method: 'POST', url: `/v1/alerts/${rule.id}/test`, token: org.token });
    expect((await test()).json()).toMatchObject({ kind: 'test', status: 'delivered' });
    const during = target.requests()[0]!;
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verify(oldSecret, during)).toMatchObject({ type: 'alert.test', data: { state: 'test', value: null } });
    expect(verify(newSecret, during)).toMatchObject({ type: 'alert.test' });

    ctx.clock.advance(24 * 60 * MINUTE + 1);
    await test();
    const after = target.requests()[1]!;
    expect(() => verify(oldSecret, after)).toThrow();
    expect(verify(newSecret, after)).toMatchObject({ type: 'alert.test' });

    // The stored secret is sealed: the database alone does not reveal it.
    const stored = await ctx.testDb.db.kysely.selectFrom('alert_rules').select(['webhook_secret', 'previous_webhook_secret']).where('id', '=', rule.id).executeTakeFirstOrThrow();
    expect(stored.webhook_secret).toMatch(/^v1\./);
    expect(JSON.stringify(stored)).not.toContain(newSecret.slice(6, 20));
    expect(JSON.stringify(stored)).not.toContain(oldSecret.slice(6, 20));
  });

  it('sends a test notification on demand, whatever the mute, and answers how it went', async () => {
    smtp.mails.length = 0;
    const org = await newTelemetryOrg(ctx);
    const rule = await createAlert(ctx, org.token, org.agentId, { channel: 'email', channel_target: 'team@example.com' });
    await ctx.request({ method: 'POST', url: `/v1/alerts/${rule.id}/mute`, token: org.token, payload: { until: new Date(ctx.clock.now() + MINUTE * 60).toISOString() } });
    const res = await ctx.request({ method: 'POST', url: `/v1/alerts/${rule.id}/test`, token: org.token });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ kind: 'test', channel: 'email', recipient: 'team@example.com', status: 'delivered', attempts: 1, history_id: null });
    expect(smtp.mails).toHaveLength(1);
    expect((await simpleParser(smtp.mails[0]!.raw)).subject).toMatch(/^\[Corral\] TEST: error_rate alert on /);
    // A test counts as no notification of the rule.
    expect((await getJson<{ notification_count: number }>(ctx, org.token, `/v1/alerts/${rule.id}`)).notification_count).toBe(0);
    expect((await notifications(org, rule.id)).map((n) => n.kind)).toEqual(['test']);
  });
});

describe.each(testDialects)('test notifications without private addresses allowed, on %s', (dialect) => {
  let ctx: TestContext;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await ctx.close();
    await receiver.stop();
  });

  it('refuses a loopback receiver at connect time and reports it as failed, without retries', async () => {
    const { token } = await ctx.newOrg();
    const agent = (await ctx.request({ method: 'POST', url: '/v1/agents', token, payload: { name: 'guarded' } })).json<{ id: string }>();
    const rule = await createAlert(ctx, token, agent.id, { channel: 'webhook', channel_target: receiver.url });
    const res = await ctx.request({ method: 'POST', url: `/v1/alerts/${rule.id}/test`, token });
    expect(res.json()).toMatchObject({
      status: 'failed', attempts: 1, next_attempt_at: null,
      error: expect.stringMatching(/^refused: 127\.0\.0\.1 is in the loopback range; .*CORRAL_WEBHOOK_ALLOW_PRIVATE=1/),
    });
    expect(receiver.requests).toHaveLength(0);
  });
});
