import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from './helpers/build-test-app.js';
import { newTelemetryOrg, type TelemetryOrg } from './helpers/telemetry-fixtures.js';

const freePort = () => new Promise<number>((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address() as AddressInfo;
    probe.close(() => resolve(port));
  });
});

/** The files under docs/examples, used exactly as a reader would use them. */
const examples = path.resolve(import.meta.dirname, '../../../docs/examples');
const example = (name: string) => readFileSync(path.join(examples, name), 'utf8');

describe('the documented examples', () => {
  let ctx: TestContext;
  let org: TelemetryOrg;
  let ingestUrl: string;
  const keyDir = mkdtempSync(path.join(tmpdir(), 'corral-examples-'));
  beforeAll(async () => {
    ctx = await buildTestContext('sqlite');
    await ctx.ingest.listen({ port: 0, host: '127.0.0.1' });
    ingestUrl = `http://127.0.0.1:${(ctx.ingest.server.address() as AddressInfo).port}`;
    org = await newTelemetryOrg(ctx);
  });
  afterAll(async () => {
    await ctx.close();
    rmSync(keyDir, { recursive: true, force: true });
  });

  it('policy.yaml is a valid policy, created and activated as the file says', async () => {
    const res = await ctx.request({
      method: 'POST', url: `/v1/agents/${org.agentId}/policies`, token: org.token, payload: { yaml_content: example('policy.yaml'), activate: true },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ mode: 'enforce', is_active: true, policy: { default: 'deny', rules: expect.arrayContaining([expect.objectContaining({ name: 'no-refunds' })]) } });
  });

  it('policy.json is a create-policy body as it stands', async () => {
    const res = await ctx.request({ method: 'POST', url: `/v1/agents/${org.agentId}/policies`, token: org.token, payload: JSON.parse(example('policy.json')) as object });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ mode: 'dry_run', is_active: true, description: expect.stringContaining('GitHub') });
  });

  it('telemetry-batch.json is accepted once its placeholders are filled in', async () => {
    const body = example('telemetry-batch.json').replaceAll('AGENT_ID', org.agentId).replaceAll('TIMESTAMP', new Date(ctx.clock.now()).toISOString());
    const res = await ctx.request({ method: 'POST', url: '/v1/telemetry', apiKey: org.apiKey, headers: { 'content-type': 'application/json' }, payload: body });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ accepted: 3 });
    const denied = await ctx.request({ method: 'GET', url: '/v1/dashboard/events?policy_result=denied', token: org.token });
    expect(denied.json().data).toEqual([expect.objectContaining({ deny_reason: 'no-refunds', status_code: null })]);
  });

  it('webhook-receiver.mjs verifies a real test notification with standardwebhooks and refuses a forged one', async () => {
    const alerting = await buildTestContext('sqlite', { container: { alerts: { webhookAllowPrivate: true } } });
    const owner = await newTelemetryOrg(alerting);
    const port = await freePort();
    const rule = (await alerting.request({
      method: 'POST', url: '/v1/alerts', token: owner.token,
      payload: { agent_id: owner.agentId, condition_type: 'error_rate', threshold: 5, channel: 'webhook', channel_target: `http://127.0.0.1:${port}/corral` },
    })).json<{ id: string; webhook_secret: string }>();
    const receiver = spawn(process.execPath, [path.join(examples, 'webhook-receiver.mjs')], {
      env: { PATH: process.env.PATH ?? '', PORT: String(port), CORRAL_WEBHOOK_SECRET: rule.webhook_secret },
    });
    let output = '';
    receiver.stdout.on('data', (c: Buffer) => (output += c.toString()));
    receiver.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const printed = async (pattern: RegExp) => {
      for (let i = 0; i < 400 && !pattern.test(output); i++) await new Promise((r) => setTimeout(r, 25));
      return output;
    };
    try {
      expect(await printed(/listening on/)).toContain(`listening on ${port}`);
      const test = await alerting.request({ method: 'POST', url: `/v1/alerts/${rule.id}/test`, token: owner.token });
      expect(test.json()).toMatchObject({ status: 'delivered', attempt_log: [expect.objectContaining({ http_status: 204 })] });
      expect(await printed(/alert\.test/)).toMatch(/alert\.test .+: Test notification for the error_rate rule on /);
      const forged = await fetch(`http://127.0.0.1:${port}/corral`, {
        method: 'POST', body: '{"type":"alert.firing"}',
        headers: { 'webhook-id': 'msg_forged', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,bm90IGEgc2lnbmF0dXJl' },
      });
      expect(forged.status).toBe(400);
      expect(await printed(/refused: /)).toMatch(/refused: No matching signature found/);
    } finally {
      receiver.kill();
      await alerting.close();
    }
  });

  it('sign-batch.mjs sends a signed batch to the ingest host and registers the key on the first one', async () => {
    const run = () => promisify(execFile)(process.execPath, [path.join(examples, 'sign-batch.mjs'), path.join(keyDir, 'agent-key.pem')], {
      env: { PATH: process.env.PATH ?? '', CORRAL_INGEST_URL: ingestUrl, CORRAL_API_KEY: org.apiKey, CORRAL_AGENT: org.agentId },
    });
    expect((await run()).stdout.trim()).toBe('200 {"accepted":1}');
    const agent = await ctx.request({ method: 'GET', url: `/v1/agents/${org.agentId}`, token: org.token });
    expect(agent.json().public_key).toMatch(/^[0-9a-f]{64}$/);
    expect((await run()).stdout.trim()).toBe('200 {"accepted":1}');
  });
});
