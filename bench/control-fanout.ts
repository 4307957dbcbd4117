/**
 * Control stream fan-out: how long a kill switch takes to reach every open control stream, and
 * what an idle stream costs the server.
 *
 *   npm run bench -- control-fanout [--streams 10000] [--rounds 5] [--pause 1000] [--store sqlite|postgres]
 *                                   [--server-flags "--cpu-prof"]
 *
 * Three processes: this one (orchestrates; asks the server for its memory after a full
 * collection, see _memory-probe.ts), the server (`corral` from the sources, embedded SQLite
 * unless --store postgres, then a fresh database), and a client process that holds the
 * streams, flips the kill switch and times every stream's event.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignJWT } from 'jose';
import pg from 'pg';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}
const streams = Number(option('streams', '10000'));
const rounds = Number(option('rounds', '5'));
/** Milliseconds between flips; a long pause lets the server go idle (heartbeats only) in between. */
const pause = Number(option('pause', '1000'));
const store = option('store', 'sqlite');
const serverFlags = option('server-flags', '').split(' ').filter(Boolean);
const jwtSecret = randomBytes(32).toString('hex');

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Memory {
  rss: number;
  /** V8 heap in use plus memory outside it (buffers), after a full collection. */
  live: number;
}

/** Full collection in the server, then its memory (see _memory-probe.ts). */
async function measure(server: ChildProcess, file: string): Promise<Memory> {
  rmSync(file, { force: true });
  server.kill('SIGUSR2');
  for (let i = 0; i < 200; i++) {
    await sleep(50);
    try {
      const m = JSON.parse(readFileSync(file, 'utf8')) as NodeJS.MemoryUsage;
      return { rss: m.rss, live: m.heapUsed + m.external };
    } catch {
      // not written yet
    }
  }
  throw new Error('the server did not report its memory');
}

const pgAdminUrl = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A database of its own for the run, dropped afterwards. */
async function adminQuery(text: string): Promise<void> {
  const admin = new pg.Client({ connectionString: pgAdminUrl });
  await admin.connect();
  try {
    await admin.query(text);
  } finally {
    await admin.end();
  }
}

async function startServer(dataDir: string, memoryFile: string, databaseUrl: string | undefined): Promise<{ child: ChildProcess; base: string }> {
  const [port, ingestPort] = [await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = {
    ...process.env, PORT: String(port), INGEST_PORT: String(ingestPort), OTLP_GRPC_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir,
    CORRAL_JWT_SECRET: jwtSecret, CORRAL_DEFAULT_PLAN: 'enterprise', LOG_LEVEL: 'warn', BENCH_MEMORY_FILE: memoryFile,
  };
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  else delete env.DATABASE_URL;
  const child = spawn(process.execPath, [...serverFlags, '--expose-gc', '--conditions=source', '--import', 'tsx', '--import', './bench/_memory-probe.ts', 'packages/server/src/main.ts'], { cwd: root, env, stdio: ['ignore', 'inherit', 'inherit'] });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 400; i++) {
    if (await fetch(`${base}/healthz`).then((r) => r.ok, () => false)) return { child, base };
    await sleep(100);
  }
  throw new Error('server did not start');
}

async function setUp(base: string) {
  const orgId = randomUUID();
  const token = await new SignJWT({ org_id: orgId, role: 'owner' })
    .setProtectedHeader({ alg: 'HS256' }).setSubject('bench').setExpirationTime('2h').sign(new TextEncoder().encode(jwtSecret));
  const call = async (url: string, body: unknown) => {
    const res = await fetch(`${base}${url}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, string>>;
  };
  const agent = await call('/v1/agents', { name: 'fan-out' });
  const key = await call('/v1/keys', { name: 'bench', scope: { kind: 'restricted', resources: { agents: 'read' } } });
  const policy = { mode: 'enforce', default: 'allow', rules: [{ name: 'no-refunds', deny: { url: 'api.stripe.com/v1/refunds/**' } }] };
  await call(`/v1/agents/${agent.id}/policies`, { policy, activate: true });
  // Warm up the stream path (code loaded and compiled) before the memory baseline is taken.
  for (let i = 0; i < 50; i++) {
    const aborter = new AbortController();
    const res = await fetch(`${base}/v1/agents/${agent.id}/control`, { headers: { 'x-api-key': key.key ?? '' }, signal: aborter.signal });
    await res.body?.getReader().read();
    aborter.abort();
  }
  return { token, agentId: agent.id ?? '', apiKey: key.key ?? '' };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
const ms = (v: number) => `${v.toFixed(1)} ms`;

type Report =
  | { kind: 'opened'; streams: number; seconds: number }
  | { kind: 'round'; round: number; status: number; responded: number; latencies: number[]; missing: number; timedOut: boolean }
  | { kind: 'error'; message: string };

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'corral-fanout-'));
  console.log(`control-fanout: ${streams} streams, ${rounds} rounds ${pause} ms apart, store ${store}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const memoryFile = path.join(dataDir, 'memory.json');
  const dbName = `corral_fanout_${process.pid}`;
  let databaseUrl: string | undefined;
  if (store === 'postgres') {
    await adminQuery(`CREATE DATABASE ${dbName}`);
    const url = new URL(pgAdminUrl);
    url.pathname = `/${dbName}`;
    databaseUrl = url.toString();
  }
  const { child: server, base } = await startServer(dataDir, memoryFile, databaseUrl);
  try {
    const setup = await setUp(base);
    await sleep(2000);
    const before = await measure(server, memoryFile);

    const client = fork(path.join(here, '_control-fanout-client.ts'), [JSON.stringify({ base, ...setup, concurrency: 200 })], {
      execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const reports: Report[] = [];
    let wake: (() => void) | undefined;
    client.on('message', (m: Report) => {
      reports.push(m);
      wake?.();
    });
    const next = async (): Promise<Report> => {
      while (reports.length === 0) await new Promise<void>((r) => (wake = r));
      return reports.shift() as Report;
    };
    const openMore = async (count: number) => {
      client.send({ cmd: 'open', count });
      const opened = await next();
      if (opened.kind !== 'opened') throw new Error(JSON.stringify(opened));
      console.log(`${opened.streams} streams open (${count} opened in ${opened.seconds.toFixed(1)} s)`);
      await sleep(3000);
      return { streams: opened.streams, memory: await measure(server, memoryFile) };
    };

    // Memory is read at 0, N/2 and N streams: the second half's cost is the marginal cost of a
    // stream, free of one-time growth (young generation, compiled code) that the first half pays.
    const half = await openMore(Math.floor(streams / 2));
    const full = await openMore(streams - half.streams);
    const kb = (bytes: number, count: number) => `${(bytes / count / 1024).toFixed(2)} KB`;
    for (const [label, from, to, count] of [
      ['0 → N', before, full.memory, full.streams],
      ['N/2 → N', half.memory, full.memory, full.streams - half.streams],
    ] as const) {
      console.log(`server memory per idle stream, ${label}: RSS ${kb(to.rss - from.rss, count)}, live JS objects and buffers ${kb(to.live - from.live, count)}`);
    }
    console.log(`server RSS ${(before.rss / 2 ** 20).toFixed(0)} MB → ${(half.memory.rss / 2 ** 20).toFixed(0)} MB → ${(full.memory.rss / 2 ** 20).toFixed(0)} MB`);
    const opened = full;

    // Round 0 is the first fan-out after connecting (code paths not yet optimized, the
    // collector still settling); it is printed but left out of the totals.
    await sleep(5000);
    const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
    console.log(`flipping the kill switch; load ${load()}`);
    const all: number[] = [];
    for (let round = 0; round <= rounds; round++) {
      client.send({ cmd: 'flip', round, active: round % 2 === 0 });
      const r = await next();
      if (r.kind !== 'round') throw new Error(JSON.stringify(r));
      const sorted = [...r.latencies].sort((a, b) => a - b);
      if (round > 0) all.push(...sorted);
      console.log(`round ${round}${round === 0 ? ' (warm-up)' : ''}: POST ${r.status} in ${ms(r.responded)}; ${sorted.length}/${opened.streams} streams got the event`
        + `${r.missing ? ` (${r.missing} missing${r.timedOut ? ', timed out' : ''})` : ''}: p50 ${ms(percentile(sorted, 50))}, p99 ${ms(percentile(sorted, 99))}, max ${ms(sorted.at(-1) ?? NaN)}`);
      await sleep(pause);
    }
    all.sort((a, b) => a - b);
    console.log(`rounds 1-${rounds}, every stream of every round: p50 ${ms(percentile(all, 50))}, p99 ${ms(percentile(all, 99))}, max ${ms(all.at(-1) ?? NaN)}; load ${load()}`);
    client.send({ cmd: 'stop' });
  } finally {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
    if (databaseUrl) await adminQuery(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  }
}

await main();
