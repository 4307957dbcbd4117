import Database from 'better-sqlite3';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { signJwt } from '../src/features/auth/index.js';
import { TEST_JWT_SECRET } from './helpers/build-test-app.js';
import { type BundledServer, bundleServer } from './helpers/bundled-server.js';
import { httpCall } from './helpers/server-process.js';
import { event } from './helpers/telemetry-fixtures.js';
import { pgUrl, testDialects } from './helpers/test-databases.js';
import { startWebhookReceiver } from './helpers/webhook-receiver.js';

/**
 * Crash safety (docs/operations.md, "Faults and crashes"): the real service under
 * sustained ingest and policy changes, with alert notifications being delivered, killed with
 * SIGKILL at random points 20 times and restarted, on both stores. Afterwards:
 *   - every event the service acknowledged (200) is stored exactly once; batches whose answer
 *     was lost in a crash are re-sent, as an SDK does, and are stored once too;
 *   - the rollups equal a recount from the raw events;
 *   - every acknowledged policy version exists, each activation counted once;
 *   - each alert fired once, and every notification was delivered, its webhook-id the same on
 *     every delivery (at least once: a crash between the receiver's answer and its record sends
 *     it again, and receivers dedupe by webhook-id).
 */
const KILLS = 20;
const MINUTE = 60_000;
const RULES = 6;

const cleanups: Array<() => unknown> = [];
let bundle: BundledServer;
beforeAll(async () => {
  bundle = await bundleServer();
}, 60_000);
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  bundle?.remove();
});

interface Running {
  child: ChildProcess;
  api: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function start(main: string, env: Record<string, string>): Promise<Running> {
  const inherited = Object.fromEntries(['PATH', 'HOME', 'TMPDIR', 'LANG'].flatMap((k) => (process.env[k] === undefined ? [] : [[k, process.env[k]]])));
  const child = spawn(process.execPath, [main], {
    env: { ...inherited, PORT: '0', INGEST_PORT: '0', OTLP_GRPC_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const api = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start:\n${output.slice(-3000)}`)), 60_000);
    child.stdout?.on('data', (d: Buffer) => {
      output += d.toString();
      const line = output.split('\n').find((l) => l.includes('"corral started"'));
      if (line) {
        clearTimeout(timer);
        resolve((JSON.parse(line) as { api: string }).api);
      }
    });
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    void exited.then(({ code }) => reject(new Error(`exited ${code} before it started:\n${output.slice(-3000)}`)));
  });
  cleanups.push(() => void child.kill('SIGKILL'));
  return { child, api, exited };
}

/** The store as the test reads it: `$n` parameters on both engines. */
interface Reader {
  all<T>(query: string, params?: unknown[]): Promise<T[]>;
  run(query: string, params?: unknown[]): Promise<void>;
  close(): Promise<void>;
}

async function storeOf(dialect: string): Promise<{ env: Record<string, string>; open(): Promise<Reader> }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'corral-crash-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  if (dialect === 'sqlite') {
    return {
      env: { DATA_DIR: dataDir },
      async open() {
        const db = new Database(path.join(dataDir, 'corral.sqlite'));
        db.pragma('busy_timeout = 5000');
        const sqlOf = (q: string) => q.replace(/\$\d+/g, '?');
        return {
          all: async <T>(q: string, params: unknown[] = []) => db.prepare(sqlOf(q)).all(...params) as T[],
          run: async (q: string, params: unknown[] = []) => void db.prepare(sqlOf(q)).run(...params),
          close: async () => void db.close(),
        };
      },
    };
  }
  const schema = `crash_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: pgUrl ?? '' });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  cleanups.push(async () => {
    const c = new pg.Client({ connectionString: pgUrl ?? '' });
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await c.end();
  });
  const url = new URL(pgUrl ?? '');
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    env: { DATA_DIR: dataDir, DATABASE_URL: url.toString() },
    async open() {
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      return {
        all: async <T>(q: string, params: unknown[] = []) => (await client.query(q, params)).rows as T[],
        run: async (q: string, params: unknown[] = []) => void (await client.query(q, params)),
        close: () => client.end(),
      };
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('crash safety under SIGKILL', () => {
  it.concurrent.for(testDialects)(`on %s: ${KILLS} kills lose no acknowledged write and duplicate none`, { timeout: 400_000 }, async (dialect, { expect }) => {
    const store = await storeOf(dialect);
    const receiver = await startWebhookReceiver('/hook');
    cleanups.push(() => receiver.stop());
    // Each delivery takes a while, so kills land while deliveries are in flight.
    receiver.answer = () => ({ status: 200, body: 'ok', delayMs: 150 });
    const env = {
      ...store.env, CORRAL_JWT_SECRET: TEST_JWT_SECRET, CORRAL_DEFAULT_PLAN: 'enterprise', CORRAL_WEBHOOK_ALLOW_PRIVATE: '1',
      CORRAL_ENCRYPTION_KEY: randomBytes(32).toString('hex'), CORRAL_SIGNING_KEY: randomBytes(32).toString('hex'),
    };
    let server = await start(bundle.main, env);
    const orgId = randomUUID();
    const token = await signJwt(TEST_JWT_SECRET, { orgId, role: 'owner', subject: 'ops' }, 3600);
    const call = async <T = Record<string, string>>(method: string, url: string, body?: unknown): Promise<T> => {
      const res = await httpCall(`${server.api}${url}`, {
        method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      expect(res.status, `${method} ${url}: ${res.body}`).toBe(200);
      return JSON.parse(res.body) as T;
    };
    const agent = await call('POST', '/v1/agents', { name: 'Crash Test Dummy' });
    const { key } = await call('POST', '/v1/keys', { name: 'sdk', scope: { kind: 'all' } });
    const agentId = agent.id ?? '';

    // The alert situation: every call fails in the last whole minute and the one under way (as in the cluster test).
    const now = Date.now();
    const slot = Math.floor((now - 10_000) / MINUTE) * MINUTE;
    const failing = [[slot - MINUTE, slot], [slot, now - 1_000]].flatMap(([from, to]) =>
      Array.from({ length: 10 }, (_, i) => event(agentId, { at: from! + Math.floor(((to! - from!) * i) / 10), policy_result: 'error', status_code: 502 })));
    const post = (events: unknown[]) => httpCall(`${server.api}/v1/telemetry`, {
      method: 'POST', headers: { 'x-api-key': key ?? '', 'content-type': 'application/json' }, body: JSON.stringify({ events }),
    });
    expect((await post(failing)).status).toBe(200);
    const sent = new Set(failing.map((e) => e.request_id));
    const rules: string[] = [];
    for (let i = 0; i < RULES; i++) {
      const rule = await call('POST', '/v1/alerts', {
        agent_id: agentId, condition_type: 'error_rate', threshold: 50, window_minutes: 1, channel: 'webhook', channel_target: receiver.url,
      });
      rules.push(rule.id ?? '');
    }
    // The first kill, then the rules are made due while the process is down: the next start evaluates them at once.
    server.child.kill('SIGKILL');
    await server.exited;
    const direct = await store.open();
    await direct.run('UPDATE alert_rules SET next_eval_at = 0');
    await direct.close();

    const unanswered: unknown[][] = [];
    const acknowledgedPolicies = new Map<number, string>();
    let kills = 1;
    while (kills < KILLS) {
      server = await start(bundle.main, env);
      let running = true;
      const telemetry = (async () => {
        while (running) {
          const events = Array.from({ length: 50 }, () => event(agentId));
          for (const e of events) sent.add(e.request_id);
          const res = await post(events).catch(() => undefined);
          if (res?.status !== 200) unanswered.push(events);
        }
      })();
      const policies = (async () => {
        while (running) {
          const res = await httpCall(`${server.api}/v1/agents/${agentId}/policies`, {
            method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ policy: { mode: 'enforce', default: kills % 2 === 0 ? 'allow' : 'deny' }, activate: true }),
          }).catch(() => undefined);
          if (res?.status === 200) {
            const body = JSON.parse(res.body) as { version: number; hash: string };
            acknowledgedPolicies.set(body.version, body.hash);
          }
          await sleep(20);
        }
      })();
      // Under way once a policy change has gone through in this life (or after 3 s), then a random moment.
      const acknowledgedBefore = acknowledgedPolicies.size;
      for (let i = 0; i < 150 && acknowledgedPolicies.size === acknowledgedBefore; i++) await sleep(20);
      await sleep(200 + Math.random() * 200);
      server.child.kill('SIGKILL');
      expect(await server.exited).toMatchObject({ signal: 'SIGKILL' });
      kills++;
      running = false;
      await Promise.all([telemetry, policies]);
    }

    // Time passes before the last start: the claims of dispatchers that were killed mid-attempt
    // lapse (two minutes, CLAIM_LEASE_MS) and scheduled retries come due. Moving those times
    // stands for the wait; what is delivered, and how often, is still the service's doing.
    const lapse = await store.open();
    await lapse.run(`UPDATE alert_notifications SET claimed_until = NULL, next_attempt_at = ${Date.now()} WHERE status = 'retrying'`);
    await lapse.close();

    // The last start: batches whose answers were lost are sent again, and the notifications finish.
    server = await start(bundle.main, env);
    for (const events of unanswered) expect((await post(events)).status).toBe(200);
    const reader = await store.open();
    const undelivered = async () => Number((await reader.all<{ n: number | string }>(`SELECT count(*) AS n FROM alert_notifications WHERE status <> 'delivered'`))[0]?.n);
    for (let i = 0; i < 300 && (await undelivered()) > 0; i++) await sleep(100);
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });

    // Telemetry: stored exactly once.
    const stored = await reader.all<{ request_id: string }>('SELECT request_id FROM telemetry_events WHERE org_id = $1', [orgId]);
    expect(kills).toBe(KILLS);
    expect(unanswered.length).toBeGreaterThan(0);
    expect(stored.length).toBe(new Set(stored.map((r) => r.request_id)).size);
    expect(stored.length).toBe(sent.size);
    expect(new Set(stored.map((r) => r.request_id))).toEqual(sent);

    // Rollups: equal to a recount from the raw events, for the agent and the organization-wide row.
    const recount = await reader.all<{ bucket: number | string; total: number | string; errors: number | string }>(
      `SELECT (ts / ${MINUTE}) * ${MINUTE} AS bucket, count(*) AS total, sum(CASE WHEN policy_result = 'error' THEN 1 ELSE 0 END) AS errors
       FROM telemetry_events WHERE org_id = $1 GROUP BY 1 ORDER BY 1`, [orgId]);
    for (const agentRow of [agentId, '00000000-0000-0000-0000-000000000000']) {
      const rollups = await reader.all<{ bucket: number | string; total: number | string; errors: number | string }>(
        `SELECT bucket_start AS bucket, total_calls AS total, error_calls AS errors FROM telemetry_rollups
         WHERE org_id = $1 AND grain = ${MINUTE} AND agent_id = $2 AND total_calls > 0 ORDER BY bucket_start`, [orgId, agentRow]);
      const numbers = (rows: typeof recount) => rows.map((r) => [Number(r.bucket), Number(r.total), Number(r.errors)]);
      expect(numbers(rollups), agentRow).toEqual(numbers(recount));
    }

    // Policies: every acknowledged version stored as acknowledged, versions without gaps, each activation counted once.
    const versions = await reader.all<{ version: number | string; hash: string }>(
      'SELECT version, hash FROM policy_versions WHERE org_id = $1 AND agent_id = $2 ORDER BY version', [orgId, agentId]);
    expect(acknowledgedPolicies.size).toBeGreaterThan(0);
    expect(versions.map((v) => Number(v.version))).toEqual(versions.map((_, i) => i + 1));
    for (const [version, hash] of acknowledgedPolicies) expect(versions[version - 1]?.hash, `version ${version}`).toBe(hash);
    const [agentState] = await reader.all<{ active: number | string; sequence: number | string }>(
      'SELECT active_policy_version AS active, policy_sequence AS sequence FROM agents WHERE org_id = $1 AND id = $2', [orgId, agentId]);
    expect(Number(agentState?.active)).toBe(versions.length);
    expect(Number(agentState?.sequence)).toBe(versions.length);

    // Alerts: one firing per rule, every notification delivered, each webhook-id one notification.
    const history = await reader.all<{ alert_id: string }>(`SELECT alert_id FROM alert_history WHERE org_id = $1 AND state = 'firing'`, [orgId]);
    expect(history.map((h) => h.alert_id).sort()).toEqual([...rules].sort());
    const notifications = await reader.all<{ id: string; status: string }>('SELECT id, status FROM alert_notifications WHERE org_id = $1', [orgId]);
    expect(notifications.map((n) => n.status)).toEqual(Array(RULES).fill('delivered'));
    const webhookIds = receiver.requests.map((r) => r.headers['webhook-id']);
    expect(new Set(webhookIds)).toEqual(new Set(notifications.map((n) => n.id)));
    // Redeliveries happen only when a kill fell between a receiver's answer and its record.
    expect(webhookIds.length - RULES).toBeLessThanOrEqual(KILLS);
    await reader.close();
  });
});
