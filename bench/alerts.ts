/**
 * Alert evaluation and notification delivery: `npm run bench -- alerts [--rules 2000]
 * [--agents 100] [--notifications 2000] [--stores sqlite,postgres]`.
 *
 * Evaluator: `--rules` rules (the four conditions, windows of 5 to 60 minutes) on `--agents`
 * agents with two hours of telemetry in the rollups, all due at one slot; times a whole
 * `runOnce` (claims, rollup reads, one transaction per rule, transitions with their outbox rows)
 * on the first slot, where about a third of the rules fire, and on the next, where state holds.
 * Baseline, same run: the rollup reads alone (the narrow read the evaluator makes, at the same
 * concurrency), i.e. what evaluation costs before it writes anything.
 *
 * Dispatcher: `--notifications` webhook notifications in the outbox, delivered to a local HTTP
 * receiver by `runOnce` (claims, signing, the SSRF guard's lookup, one transaction per
 * attempt). Baseline, same run: the same bodies POSTed to the same receiver with node:http at
 * the same concurrency (8) and a new connection each, as the sender makes them.
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createContainer } from '../packages/server/src/container.js';
import { createDatabase, type Db } from '../packages/server/src/db/database.js';
import { migrateToLatest } from '../packages/server/src/db/migrate.js';
import type { Principal } from '../packages/server/src/domain/principal.js';
import { createAgentWindowStats, createDashboardStore } from '../packages/server/src/features/dashboard/index.js';
import { slotOf } from '../packages/server/src/features/alerts/index.js';
import { forEachLimited } from '../packages/server/src/lib/concurrency.js';
import { stopWorkers } from '../packages/server/src/lib/lifecycle.js';
import { silentLogger } from '../packages/server/src/lib/logger.js';
import { flag, load, machine, percentile, table } from './_bench-kit.js';
import { generateEvents } from './_dashboard-data.js';

const MINUTE = 60_000;
const ruleCount = Number(flag('rules', '2000'));
const agentCount = Number(flag('agents', '100'));
const notificationCount = Number(flag('notifications', '2000'));
const stores = flag('stores', 'sqlite,postgres').split(',');
const pgAdminUrl = flag('pg', 'postgres://postgres@127.0.0.1:5432/postgres');
const conditions = ['error_rate', 'denied_rate', 'latency_p99', 'volume_drop'] as const;
// Thresholds that make roughly a third of the rules fire on the generated traffic (3% errors, 4% denied).
const thresholds = { error_rate: [2, 5, 10], denied_rate: [3, 8, 20], latency_p99: [500, 2000, 9000], volume_drop: [5, 50, 90] };

async function openStore(store: string): Promise<{ db: Db; drop: () => Promise<void> }> {
  if (store === 'sqlite') {
    const file = path.join(tmpdir(), `corral-bench-alerts-${process.pid}.sqlite`);
    const drop = async () => {
      for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
    };
    await drop();
    return { db: createDatabase({ sqliteFile: file }), drop };
  }
  const admin = async (query: string) => {
    const client = new pg.Client({ connectionString: pgAdminUrl });
    await client.connect();
    await client.query(query);
    await client.end();
  };
  await admin('DROP DATABASE IF EXISTS corral_bench_alerts WITH (FORCE)');
  await admin('CREATE DATABASE corral_bench_alerts');
  const url = new URL(pgAdminUrl);
  url.pathname = '/corral_bench_alerts';
  return { db: createDatabase({ databaseUrl: url.toString(), poolSize: 10 }), drop: () => admin('DROP DATABASE IF EXISTS corral_bench_alerts WITH (FORCE)') };
}

function startReceiver(): Promise<{ url: string; received: () => number; close(): Promise<void> }> {
  let count = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count++;
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received: () => count,
    close: () => new Promise<void>((done) => server.close(() => done())),
  })));
}

function post(url: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const began = performance.now();
    const req = http.request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(performance.now() - began));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function benchStore(store: string) {
  const { db, drop } = await openStore(store);
  let at = Math.floor(Date.now() / MINUTE) * MINUTE;
  const clock = { now: () => at };
  const receiver = await startReceiver();
  const container = await createContainer({
    db, clock, log: silentLogger, defaultPlan: 'enterprise', jwt: { secret: 'bench-secret-that-is-long-enough-for-hs256-0123456789' },
    alerts: { webhookAllowPrivate: true, smtpUrl: undefined },
  });
  try {
    await migrateToLatest(db);
    const orgId = randomUUID();
    await container.orgService.ensure(orgId);
    const owner: Principal = { kind: 'user', orgId, subject: 'bench', role: 'owner', expiresAt: undefined };
    const agentIds: string[] = [];
    for (let i = 0; i < agentCount; i++) agentIds.push((await container.agentService.create(orgId, { type: 'system', id: 'bench' }, { name: `agent ${i}` })).id);
    const end = at;
    for (const rows of generateEvents(orgId, agentIds, 200 * agentCount * 12, end - 2 * 60 * MINUTE, end, 2000)) await container.telemetryWriter.write(rows);

    for (let i = 0; i < ruleCount; i++) {
      const condition = conditions[i % 4]!;
      await container.alertService.create(owner, {
        agent_id: agentIds[i % agentCount]!, condition_type: condition, threshold: thresholds[condition][i % 3]!,
        window_minutes: [5, 15, 60][Math.floor(i / 4) % 3]!, channel: 'email', channel_target: 'ops@example.com', cooldown_minutes: 0,
      });
    }

    // Baseline: the reads alone, for the rules as the evaluator would make them.
    const rules = await db.kysely.selectFrom('alert_rules').select(['agent_id', 'condition_type', 'window_minutes']).where('org_id', '=', orgId).execute();
    at = end + 10_000;
    const slot = slotOf(clock.now());
    const stats = createAgentWindowStats({ dashboardStore: createDashboardStore(db) });
    let began = performance.now();
    await forEachLimited(rules, 4, async (r) => {
      const span = r.window_minutes * MINUTE;
      const windows = r.condition_type === 'volume_drop' ? [{ from: slot - span, to: slot }, { from: slot - 2 * span, to: slot - span }] : [{ from: slot - span, to: slot }];
      await stats.windows(orgId, r.agent_id, windows);
    });
    const readsMs = performance.now() - began;

    began = performance.now();
    const first = await container.alertEvaluator.runOnce();
    const firstMs = performance.now() - began;
    at += MINUTE;
    began = performance.now();
    const second = await container.alertEvaluator.runOnce();
    const secondMs = performance.now() - began;
    const evaluation = [
      { run: 'baseline: rollup reads only', rules: rules.length, transitions: '–', ms: readsMs.toFixed(0), 'rules/s': (rules.length / readsMs * 1000).toFixed(0) },
      { run: 'runOnce, first slot', rules: first.evaluated, transitions: first.transitions, ms: firstMs.toFixed(0), 'rules/s': (first.evaluated / firstMs * 1000).toFixed(0) },
      { run: 'runOnce, next slot', rules: second.evaluated, transitions: second.transitions, ms: secondMs.toFixed(0), 'rules/s': (second.evaluated / secondMs * 1000).toFixed(0) },
    ];

    // Delivery: move the outbox to webhooks at the local receiver, topped up to --notifications.
    await db.kysely.deleteFrom('alert_notifications').execute();
    const hookRule = await container.alertService.create(owner, {
      agent_id: agentIds[0]!, condition_type: 'error_rate', threshold: 50, channel: 'webhook', channel_target: receiver.url,
    });
    const body = JSON.stringify({ type: 'alert.firing', timestamp: new Date().toISOString(), data: { summary: 'x'.repeat(600) } });
    const now = clock.now();
    for (let i = 0; i < notificationCount; i += 500) {
      await db.kysely.insertInto('alert_notifications').values(Array.from({ length: Math.min(500, notificationCount - i) }, () => ({
        org_id: orgId, id: randomUUID(), alert_id: hookRule.id, history_id: null, kind: 'firing', channel: 'webhook', recipient: receiver.url,
        payload: body, status: 'retrying', attempts: 0, last_error: null, next_attempt_at: now, delivered_at: null, claim_id: null, claimed_until: null,
        created_at: now, updated_at: now,
      }))).execute();
    }
    const durations: number[] = [];
    began = performance.now();
    await forEachLimited(Array.from({ length: notificationCount }), 8, async () => void durations.push(await post(receiver.url, body)));
    const bareMs = performance.now() - began;
    began = performance.now();
    const attempts = await container.alertDispatcher.runOnce();
    const dispatchMs = performance.now() - began;
    const attemptMs = (await db.kysely.selectFrom('alert_notification_attempts').select('duration_ms').where('org_id', '=', orgId).execute()).map((r) => r.duration_ms);
    const delivered = await db.kysely.selectFrom('alert_notifications').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'delivered').executeTakeFirstOrThrow();
    const delivery = [
      { run: 'baseline: bare POSTs', sent: notificationCount, ms: bareMs.toFixed(0), 'per s': (notificationCount / bareMs * 1000).toFixed(0), 'p50 / p99 ms per request': `${percentile(durations, 0.5).toFixed(1)} / ${percentile(durations, 0.99).toFixed(1)}` },
      { run: 'dispatcher runOnce', sent: attempts, ms: dispatchMs.toFixed(0), 'per s': (attempts / dispatchMs * 1000).toFixed(0), 'p50 / p99 ms per request': `${percentile(attemptMs, 0.5)} / ${percentile(attemptMs, 0.99)} (delivered: ${Number(delivered.n)})` },
    ];
    return { evaluation, delivery };
  } finally {
    await stopWorkers(container.workers, silentLogger);
    await receiver.close();
    await db.close();
    await drop();
  }
}

console.log(`alerts benchmark: ${ruleCount} rules on ${agentCount} agents, ${notificationCount} notifications; ${machine()}; load ${load()}`);
for (const store of stores) {
  const { evaluation, delivery } = await benchStore(store);
  console.log(`\n${store}: evaluation\n${table(evaluation)}\n\n${store}: delivery\n${table(delivery)}`);
}
console.log(`\nload after: ${load()}`);
