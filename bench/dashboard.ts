/**
 * Dashboard latency at scale: `npm run bench -- dashboard [--events 10000000] [--days 30]
 * [--stores sqlite,postgres] [--iterations 40] [--reload]`.
 *
 * Loads `--events` events over `--days` days straight through the telemetry store (in time
 * order, 2,000 per transaction, rollups folded as in production), then measures through the
 * real HTTP stack (Fastify inject, no socket) the p50/p95 of every aggregate over the whole
 * 30 days and of the event list's first page with each single filter. Loaded stores are kept
 * (SQLite file in the temp dir, PostgreSQL database corral_bench_dashboard) and reused when the
 * event count matches; --reload loads afresh.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { buildApiApp } from '../packages/server/src/app.js';
import { createContainer } from '../packages/server/src/container.js';
import { createDatabase, type Db } from '../packages/server/src/db/database.js';
import { migrateToLatest } from '../packages/server/src/db/migrate.js';
import { signJwt } from '../packages/server/src/features/auth/index.js';
import { systemClock } from '../packages/server/src/lib/clock.js';
import { stopWorkers } from '../packages/server/src/lib/lifecycle.js';
import { silentLogger } from '../packages/server/src/lib/logger.js';
import { flag, load, machine, percentile, table } from './_bench-kit.js';
import { generateEvents, HOSTS, hostName } from './_dashboard-data.js';

const DAY = 86_400_000;
const count = Number(flag('events', '10000000'));
const days = Number(flag('days', '30'));
const iterations = Number(flag('iterations', '40'));
const stores = flag('stores', 'sqlite,postgres').split(',');
const reload = process.argv.includes('--reload');
const pgAdminUrl = flag('pg', 'postgres://postgres@127.0.0.1:5432/postgres');
const secret = 'bench-secret-that-is-long-enough-for-hs256-0123456789';

interface Meta {
  count: number;
  days: number;
  orgId: string;
  agentIds: string[];
  end: number;
  traceId: string;
}

async function openStore(store: string): Promise<{ db: Db; metaFile: string; drop(): Promise<void> }> {
  if (store === 'sqlite') {
    const file = path.join(tmpdir(), 'corral-bench-dashboard.sqlite');
    if (reload) for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
    return { db: createDatabase({ sqliteFile: file }), metaFile: `${file}.json`, drop: async () => undefined };
  }
  const admin = new pg.Client({ connectionString: pgAdminUrl });
  await admin.connect();
  if (reload) await admin.query('DROP DATABASE IF EXISTS corral_bench_dashboard WITH (FORCE)');
  const exists = await admin.query(`SELECT 1 FROM pg_database WHERE datname = 'corral_bench_dashboard'`);
  if (exists.rowCount === 0) await admin.query('CREATE DATABASE corral_bench_dashboard');
  await admin.end();
  const url = new URL(pgAdminUrl);
  url.pathname = '/corral_bench_dashboard';
  const metaFile = path.join(tmpdir(), 'corral-bench-dashboard.pg.json');
  if (reload) rmSync(metaFile, { force: true });
  return { db: createDatabase({ databaseUrl: url.toString(), poolSize: 4 }), metaFile, drop: async () => undefined };
}

async function loadData(container: Awaited<ReturnType<typeof createContainer>>): Promise<Meta> {
  const orgId = randomUUID();
  await container.orgService.ensure(orgId);
  const actor = { type: 'system' as const, id: 'bench' };
  const agentIds: string[] = [];
  for (let i = 0; i < 10; i++) agentIds.push((await container.agentService.create(orgId, actor, { name: `agent ${i}` })).id);
  const writer = container.telemetryWriter;
  const end = Math.floor(Date.now() / 60_000) * 60_000;
  const start = end - days * DAY;
  const began = Date.now();
  let written = 0;
  let traceId = '';
  for (const rows of generateEvents(orgId, agentIds, count, start, end, 2000)) {
    await writer.write(rows);
    written += rows.length;
    if (!traceId) traceId = rows.find((r) => r.trace_id)?.trace_id ?? '';
    if (written % 500_000 === 0) console.log(`  loaded ${written.toLocaleString()} events, ${Math.round(written / ((Date.now() - began) / 1000))} events/s`);
  }
  console.log(`  loaded ${written.toLocaleString()} events in ${((Date.now() - began) / 1000).toFixed(0)} s`);
  return { count, days, orgId, agentIds, end, traceId };
}

async function measure(store: string): Promise<Array<Record<string, string | number>>> {
  const { db, metaFile } = await openStore(store);
  await migrateToLatest(db);
  const container = await createContainer({ db, clock: systemClock, log: silentLogger, defaultPlan: 'enterprise', jwt: { secret } });
  let meta: Meta | undefined = existsSync(metaFile) ? (JSON.parse(readFileSync(metaFile, 'utf8')) as Meta) : undefined;
  if (!meta || meta.count !== count || meta.days !== days) {
    console.log(`${store}: loading ${count.toLocaleString()} events over ${days} days (load average ${load()})`);
    meta = await loadData(container);
    writeFileSync(metaFile, JSON.stringify(meta));
  }
  if (db.engine === 'postgres') await db.pool.query('ANALYZE');
  else db.sqlite.exec('ANALYZE');
  const { app } = await buildApiApp({ container, logger: undefined, bodyLimitBytes: 1024 * 1024 });
  await app.ready();
  const token = await signJwt(secret, { orgId: meta.orgId, role: 'viewer', subject: 'bench' }, 3600);
  // The window ends where the data ends, so an old load still measures a full 30 days of data.
  const window = `from=${new Date(meta.end - days * DAY).toISOString()}&to=${new Date(meta.end).toISOString()}`;
  const lastDay = `from=${new Date(meta.end - DAY).toISOString()}&to=${new Date(meta.end).toISOString()}`;
  const hour = `from=${new Date(meta.end - 15 * DAY).toISOString()}&to=${new Date(meta.end - 15 * DAY + 3_600_000).toISOString()}`;
  const cases: Array<[string, string]> = [
    ['stats (30 days)', `/v1/dashboard/stats?${window}`],
    ['agents (30 days)', `/v1/dashboard/agents?${window}`],
    ['hosts (30 days)', `/v1/dashboard/hosts?${window}&limit=50`],
    ['timeseries (30 days, 12 h buckets)', `/v1/dashboard/timeseries?${window}`],
    ['rule-hits (30 days)', `/v1/dashboard/rule-hits?${window}`],
    // One agent's hosts and rule hits (the agent page) are counted from its raw events.
    ['hosts of the busiest agent (24 h)', `/v1/dashboard/hosts?${lastDay}&agent_id=${meta.agentIds[0]}`],
    ['hosts of the busiest agent (30 days)', `/v1/dashboard/hosts?${window}&agent_id=${meta.agentIds[0]}`],
    ['hosts of the quietest agent (30 days)', `/v1/dashboard/hosts?${window}&agent_id=${meta.agentIds[meta.agentIds.length - 1]}`],
    ['rule-hits of the busiest agent (24 h)', `/v1/dashboard/rule-hits?${lastDay}&agent_id=${meta.agentIds[0]}`],
    ['rule-hits of the busiest agent (30 days)', `/v1/dashboard/rule-hits?${window}&agent_id=${meta.agentIds[0]}`],
    ['events: no filter', '/v1/dashboard/events'],
    ['events: agent_id (busiest)', `/v1/dashboard/events?agent_id=${meta.agentIds[0]}`],
    ['events: agent_id (quietest)', `/v1/dashboard/events?agent_id=${meta.agentIds[meta.agentIds.length - 1]}`],
    ['events: method=DELETE', '/v1/dashboard/events?method=DELETE'],
    ['events: url_host (busiest)', `/v1/dashboard/events?url_host=${hostName(0)}`],
    [`events: url_host (rarest of ${HOSTS})`, `/v1/dashboard/events?url_host=${hostName(HOSTS - 1)}`],
    ['events: status_code=503', '/v1/dashboard/events?status_code=503'],
    ['events: status_code=429', '/v1/dashboard/events?status_code=429'],
    ['events: policy_result=denied', '/v1/dashboard/events?policy_result=denied'],
    ['events: trace_id', `/v1/dashboard/events?trace_id=${meta.traceId}`],
    ['events: from/to (one hour, 15 days ago)', `/v1/dashboard/events?${hour}`],
  ];
  const rows: Array<Record<string, string | number>> = [];
  for (const [name, url] of cases) {
    const times: number[] = [];
    let items = 0;
    for (let i = 0; i < iterations + 3; i++) {
      const t = process.hrtime.bigint();
      const res = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
      const ms = Number(process.hrtime.bigint() - t) / 1e6;
      if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
      if (i >= 3) times.push(ms);
      const body = res.json<unknown>();
      items = Array.isArray(body) ? body.length : Array.isArray((body as { data?: unknown }).data) ? (body as { data: unknown[] }).data.length : 1;
    }
    rows.push({ store, query: name, items, 'p50 ms': percentile(times, 0.5).toFixed(1), 'p95 ms': percentile(times, 0.95).toFixed(1) });
  }
  await app.close();
  await stopWorkers(container.workers, silentLogger);
  await db.close();
  return rows;
}

console.log(`machine: ${machine()}; load average before: ${load()}`);
console.log(`${count.toLocaleString()} events over ${days} days, ${iterations} timed requests per query`);
const all: Array<Record<string, string | number>> = [];
// Requests go through app.inject, so no socket holds the event loop, and the store's own
// threads and timers are unref'd by design: without this, the run could end with work pending.
const keepAlive = setInterval(() => undefined, 1 << 30);
for (const store of stores) all.push(...(await measure(store)));
clearInterval(keepAlive);
console.log(table(all));
console.log(`load average after: ${load()}`);
