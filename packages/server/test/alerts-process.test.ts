import type { AlertNotification, AlertHistoryRecord, Page, WebhookPayload } from '@corral/contracts';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, it } from 'vitest';
import { signJwt } from '../src/features/auth/index.js';
import { TEST_JWT_SECRET } from './helpers/build-test-app.js';
import { httpCall, type ServerProcess, startServerProcess } from './helpers/server-process.js';
import { pgUrl, testDialects } from './helpers/test-databases.js';
import { startWebhookReceiver } from './helpers/webhook-receiver.js';

/**
 * The real service process, with the evaluation interval it runs in production (every minute,
 * 10 s after the minute ends), fed real telemetry over HTTP. Slow by nature: the situation has
 * to wait for a minute boundary. Both stores run side by side.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function storeEnv(dialect: string): Promise<Record<string, string>> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'corral-alerts-proc-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  if (dialect === 'sqlite') return { DATA_DIR: dataDir };
  const schema = `alerts_${randomBytes(5).toString('hex')}`;
  const admin = async (query: string) => {
    const client = new pg.Client({ connectionString: pgUrl ?? '' });
    await client.connect();
    await client.query(query);
    await client.end();
  };
  await admin(`CREATE SCHEMA ${schema}`);
  cleanups.push(() => admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
  const url = new URL(pgUrl ?? '');
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { DATA_DIR: dataDir, DATABASE_URL: url.toString() };
}

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

describe('alerts in the running service', () => {
  it.concurrent.for(testDialects)('on %s: a firing rule notifies within 90 s, and a SIGKILL before delivery still delivers once', { timeout: 300_000 }, async (dialect, { expect }) => {
    const up = await startWebhookReceiver('/up');
    // This receiver is down until after the crash: it takes its port back then.
    const down = await startWebhookReceiver('/down');
    await down.stop();
    cleanups.push(() => up.stop(), () => down.stop());
    const env = {
      ...(await storeEnv(dialect)), CORRAL_JWT_SECRET: TEST_JWT_SECRET, CORRAL_WEBHOOK_ALLOW_PRIVATE: '1', CORRAL_DEFAULT_PLAN: 'team',
    };
    let server: ServerProcess = await startServerProcess(env);
    cleanups.push(() => void server.child.kill('SIGKILL'));

    const orgId = randomUUID();
    const token = await signJwt(TEST_JWT_SECRET, { orgId, role: 'owner', subject: 'ops' }, 3600);
    const call = async <T>(method: string, url: string, body?: unknown, base = server.api): Promise<T> => {
      const res = await httpCall(`${base}${url}`, {
        method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      expect(res.status, `${method} ${url}: ${res.body}`).toBe(200);
      return JSON.parse(res.body) as T;
    };
    const agent = await call<{ id: string }>('POST', '/v1/agents', { name: 'Checkout Bot' });
    const { key } = await call<{ key: string }>('POST', '/v1/keys', { name: 'sdk', scope: { kind: 'restricted', resources: { events: 'write' } } });
    const rule = { agent_id: agent.id, condition_type: 'error_rate', threshold: 50, window_minutes: 1, channel: 'webhook' };
    const ruleUp = await call<{ id: string; webhook_secret: string }>('POST', '/v1/alerts', { ...rule, channel_target: up.url });
    const ruleDown = await call<{ id: string }>('POST', '/v1/alerts', { ...rule, channel_target: down.url });

    // The situation starts: three of every four calls fail, reported as an SDK would, each second.
    const started = Date.now();
    let sending = true;
    let wakeFeed = () => {};
    const refused: string[] = [];
    const feed = (async () => {
      while (sending) {
        const events = ['error', 'error', 'error', 'allowed'].map((policy_result) => ({
          agent_id: agent.id, timestamp: new Date().toISOString(), request_id: randomUUID(), method: 'POST', url_host: 'api.payments.example',
          url_path: '/v1/charges', status_code: policy_result === 'error' ? 502 : 200, latency_ms: 40, policy_result,
        }));
        // The main host takes unsigned batches (contract section 7), as an SDK without a key pair sends them.
        const res = await httpCall(`${server.api}/v1/telemetry`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ events }) });
        if (res.status !== 200) refused.push(res.body);
        await new Promise<void>((r) => {
          wakeFeed = r;
          setTimeout(r, 1000);
        });
      }
    })();
    const [first] = await up.received(1, 100_000).finally(() => {
      sending = false;
      wakeFeed();
    });

    // The other rule fired in the same transition round; its receiver is down, so it waits to retry.
    // The crash has to fall between that failed attempt and its retry, 4 to 6 s later (after which
    // the next is 5 minutes away): so the server is killed as soon as the failure is recorded, and
    // the rest is checked afterwards.
    const notificationsOf = (id: string) => call<Page<AlertNotification>>('GET', `/v1/alerts/${id}/notifications`);
    const [firstFailure] = await Promise.all([
      until('the first failed attempt', async () => (await notificationsOf(ruleDown.id)).data[0]?.attempt_log[0], 30_000, 50),
      feed,
    ]);
    server.child.kill('SIGKILL');
    const killedAfterMs = Date.now() - Date.parse(firstFailure.at);
    expect(await server.exited).toMatchObject({ signal: 'SIGKILL' });

    await down.start();
    server = await startServerProcess(env);
    await down.received(1, 60_000).catch(async (err: Error) => {
      const log = (await notificationsOf(ruleDown.id)).data[0]?.attempt_log;
      throw new Error(`${err.message}; the server was killed ${killedAfterMs} ms after the first failed attempt; attempts: ${JSON.stringify(log)}`);
    });
    const delivered = await until('delivered', async () => {
      const [n] = (await notificationsOf(ruleDown.id)).data;
      return n?.status === 'delivered' ? n : undefined;
    }, 30_000);
    expect(delivered.attempt_log.map((a) => a.status)).toEqual([...Array(delivered.attempts - 1).fill('retrying'), 'delivered']);
    expect(delivered.attempt_log[0]?.error).toMatch(/ECONNREFUSED/);
    // Give a second delivery, or a second firing, time to show up: neither does.
    await new Promise((r) => setTimeout(r, 3000));
    expect(down.requests).toHaveLength(1);
    expect(up.requests).toHaveLength(1);
    expect(refused).toEqual([]);
    expect(first!.at - started).toBeLessThan(90_000);
    const payload = new Webhook(ruleUp.webhook_secret).verify(first!.body, first!.headers as Record<string, string>) as WebhookPayload;
    expect(payload).toMatchObject({ type: 'alert.firing', data: { state: 'firing', value: 75, threshold: 50, agent: { id: agent.id, name: 'Checkout Bot' } } });
    for (const id of [ruleUp.id, ruleDown.id]) {
      const history = (await call<Page<AlertHistoryRecord>>('GET', `/v1/alerts/${id}/history`)).data;
      expect(history.filter((h) => h.state === 'firing')).toHaveLength(1);
    }
    expect(await server.stop()).toEqual({ code: 0, signal: null });
  });
});
