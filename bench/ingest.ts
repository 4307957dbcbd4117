/**
 * Ingest throughput: `npm run bench -- ingest [--duration 20] [--connections 4] [--stores sqlite,postgres]`.
 *
 * For each store it starts the real service (packages/server/src/main.ts) as its own process,
 * creates a key and ten agents, then this process, as the load generator (autocannon), posts
 * 1,000-event batches with fresh request_ids to POST /v1/telemetry on the main host:
 *   1. sustained: as fast as the server answers, for --duration seconds;
 *   2. half load: open loop at 50% of (1): a batch every 2/(1) seconds whatever the answers,
 *      so queueing shows in the latencies (a closed loop would hide it).
 * Then the ceiling: a bare Fastify route (bench/_bare-server.ts) parsing the same bodies.
 */
import autocannon from 'autocannon';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createDatabase } from '../packages/server/src/db/database.js';
import { SQLITE_FILE } from '../packages/server/src/service.js';
import { signJwt } from '../packages/server/src/features/auth/index.js';
import { flag, load, machine, percentile, startProcess, stopProcess, table } from './_bench-kit.js';

const duration = Number(flag('duration', '20'));
const connections = Number(flag('connections', '4'));
const stores = flag('stores', 'sqlite,postgres').split(',');
const pgAdminUrl = flag('pg', 'postgres://postgres@127.0.0.1:5432/postgres');
const BATCH = 1000;
const secret = 'bench-secret-that-is-long-enough-for-hs256-0123456789';

/**
 * 1,000 events as one JSON text, cut where each batch puts its own request-id prefix and its
 * timestamp, so every batch is new work (fresh ids, the current time) and costs no re-encoding.
 * The marks are plain text: JSON.stringify would escape a control character and leave no cut.
 */
function bodyFactory(agentIds: string[]): () => string {
  const ID = '@@id@@';
  const AT = '@@at@@';
  const methods = ['GET', 'GET', 'GET', 'POST', 'POST', 'PUT', 'DELETE'];
  const events = Array.from({ length: BATCH }, (_, i) => {
    const result = i % 25 === 0 ? 'denied' : i % 33 === 0 ? 'error' : 'allowed';
    return {
      agent_id: agentIds[i % agentIds.length], timestamp: AT, request_id: `${ID}-${String(i).padStart(4, '0')}`, method: methods[i % methods.length],
      url_host: `api${i % 20}.example.com`, url_path: `/v1/resources/{id}/items/${i % 7}`,
      status_code: result === 'error' ? 502 : 200, latency_ms: 5 + ((i * 7919) % 400), policy_result: result,
      ...(result === 'denied' ? { deny_reason: `rule-${i % 5}` } : {}),
    };
  });
  // Text and marks alternate: [text, mark, text, mark, …, text].
  const pieces = JSON.stringify({ events, sdk_version: 'bench' }).split(/(@@id@@|@@at@@)/);
  if (pieces.length !== 4 * BATCH + 1) throw new Error('bench body: marks not found');
  const run = randomUUID().slice(0, 8);
  let n = 0;
  return () => {
    const id = `${run}-${String(++n).padStart(8, '0')}`;
    const at = new Date().toISOString();
    let body = pieces[0]!;
    for (let k = 1; k < pieces.length; k += 2) body += (pieces[k] === ID ? id : at) + pieces[k + 1]!;
    return body;
  };
}

interface Run {
  eventsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
}

async function hammer(url: string, headers: Record<string, string>, nextBody: () => string): Promise<Run> {
  const result = await autocannon({
    url, connections, duration,
    requests: [{ method: 'POST', path: '/v1/telemetry', headers: { ...headers, 'content-type': 'application/json' }, setupRequest: (req) => ({ ...req, body: nextBody() }) }],
  });
  return { eventsPerSecond: Math.round((result.requests.total * BATCH) / duration), p50: result.latency.p50, p99: result.latency.p99, errors: result.non2xx + result.errors };
}

/** Open-loop load: sends on a fixed schedule, measuring each batch from its scheduled start. */
async function paced(url: string, headers: Record<string, string>, nextBody: () => string, perSecond: number): Promise<Run> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const total = Math.round(perSecond * duration);
  const inFlight: Array<Promise<void>> = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const body = nextBody();
    const late = performance.now() - due;
    if (process.env.BENCH_TRACE && late > 20) console.log(`generator late by ${Math.round(late)} ms at ${((due - started) / 1000).toFixed(2)} s`);
    inFlight.push(fetch(`${url}/v1/telemetry`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body })
      .then(async (res) => {
        await res.arrayBuffer();
        if (!res.ok) errors++;
        latencies.push(performance.now() - due);
        if (process.env.BENCH_TRACE && performance.now() - due > 100) console.log(`slow batch at ${((due - started) / 1000).toFixed(2)} s: ${Math.round(performance.now() - due)} ms`);
      }, () => void errors++));
  }
  await Promise.all(inFlight);
  return { eventsPerSecond: Math.round(perSecond * BATCH), p50: Math.round(percentile(latencies, 0.5)), p99: Math.round(percentile(latencies, 0.99)), errors };
}

async function prepareOrg(base: string): Promise<{ apiKey: string; agentIds: string[] }> {
  const token = await signJwt(secret, { orgId: randomUUID(), role: 'owner', subject: 'bench' }, 3600);
  const call = async (p: string, body: unknown) => {
    const res = await fetch(`${base}${p}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`${p}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, string>>;
  };
  const { key } = await call('/v1/keys', { name: 'bench', scope: { kind: 'all' } });
  const agentIds = [];
  for (let i = 0; i < 10; i++) agentIds.push((await call('/v1/agents', { name: `bench agent ${i}` })).id!);
  return { apiKey: key!, agentIds };
}

async function benchStore(store: string, port: number): Promise<Record<string, string | number>> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'corral-bench-'));
  const dbName = `corral_bench_${process.pid}_${port}`;
  let databaseUrl: string | undefined;
  if (store === 'postgres') {
    const admin = new pg.Client({ connectionString: pgAdminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${dbName}`);
    await admin.end();
    const url = new URL(pgAdminUrl);
    url.pathname = `/${dbName}`;
    databaseUrl = url.toString();
  }
  const base = `http://127.0.0.1:${port}`;
  const server = await startProcess('packages/server/src/main.ts', [], {
    PORT: String(port), INGEST_PORT: String(port + 1), OTLP_GRPC_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, CORRAL_JWT_SECRET: secret,
    CORRAL_DEFAULT_PLAN: 'enterprise', CORRAL_RATE_LIMIT_ENTERPRISE: '1000000000', LOG_LEVEL: 'warn',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  }, `${base}/healthz`);
  try {
    const { apiKey, agentIds } = await prepareOrg(base);
    const nextBody = bodyFactory(agentIds);
    const headers = { 'x-api-key': apiKey };
    await autocannon({ url: base, connections, duration: 3, requests: [{ method: 'POST', path: '/v1/telemetry', headers: { ...headers, 'content-type': 'application/json' }, setupRequest: (req) => ({ ...req, body: nextBody() }) }] });
    const sustained = await hammer(base, headers, nextBody);
    const half = await paced(base, headers, nextBody, sustained.eventsPerSecond / BATCH / 2);
    await stopProcess(server);
    return {
      target: `corral on ${store}`, 'events/s': sustained.eventsPerSecond, 'batch p50 ms': sustained.p50, 'batch p99 ms': sustained.p99,
      'p50 / p99 ms at 50% rate': `${half.p50} / ${half.p99}`, 'non-2xx': sustained.errors + half.errors,
      'events stored': await storedEvents(dataDir, databaseUrl),
    };
  } finally {
    await stopProcess(server);
    rmSync(dataDir, { recursive: true, force: true });
    if (databaseUrl) {
      const admin = new pg.Client({ connectionString: pgAdminUrl });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await admin.end();
    }
  }
}

/** Counts the stored events after the run, so the table shows what was kept, not only what was answered. */
async function storedEvents(dataDir: string, databaseUrl: string | undefined): Promise<number> {
  const db = createDatabase(databaseUrl ? { databaseUrl } : { sqliteFile: path.join(dataDir, SQLITE_FILE) });
  try {
    const row = await db.kysely.selectFrom('telemetry_events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  } finally {
    await db.close();
  }
}

async function benchCeiling(port: number): Promise<Record<string, string | number>> {
  const base = `http://127.0.0.1:${port}`;
  const server = await startProcess('bench/_bare-server.ts', [String(port)], {}, `${base}/healthz`);
  try {
    const nextBody = bodyFactory(Array.from({ length: 10 }, () => randomUUID()));
    await autocannon({ url: base, connections, duration: 3, requests: [{ method: 'POST', path: '/v1/telemetry', headers: { 'content-type': 'application/json' }, setupRequest: (req) => ({ ...req, body: nextBody() }) }] });
    const run = await hammer(base, {}, nextBody);
    return { target: 'bare Fastify parse (ceiling)', 'events/s': run.eventsPerSecond, 'batch p50 ms': run.p50, 'batch p99 ms': run.p99, 'p50 / p99 ms at 50% rate': '-', 'non-2xx': run.errors, 'events stored': '-' };
  } finally {
    await stopProcess(server);
  }
}

console.log(`machine: ${machine()}; load average before: ${load()}`);
console.log(`batches of ${BATCH} events, ${connections} connections, ${duration} s per run`);
const rows = [await benchCeiling(19_100)];
for (const [i, store] of stores.entries()) rows.push(await benchStore(store, 19_200 + i * 10));
const ceiling = Number(rows[0]!['events/s']);
for (const row of rows.slice(1)) row['share of ceiling'] = `${Math.round((Number(row['events/s']) / ceiling) * 100)}%`;
console.log(table(rows));
console.log(`load average after: ${load()}`);
