import { EventSource } from 'eventsource';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signJwt } from '../src/features/auth/index.js';
import { SERVER_MAIN } from './helpers/server-process.js';
import { buildTestContext, TEST_JWT_SECRET } from './helpers/build-test-app.js';
import { createTestDb, type TestDb, testDialects } from './helpers/test-databases.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

interface ServerProcess {
  base: string;
  child: ChildProcess;
  output: string[];
  exited: Promise<number | null>;
}

/** A real `corral` process on the given store, as `npm start` runs it but from the sources. */
async function startServer(databaseUrl: string, dataDir: string, signingKey: string): Promise<ServerProcess> {
  const [port, ingestPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, [SERVER_MAIN], {
    cwd: repoRoot,
    env: {
      ...process.env,
      PORT: String(port), INGEST_PORT: String(ingestPort), OTLP_GRPC_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: databaseUrl,
      CORRAL_JWT_SECRET: TEST_JWT_SECRET, CORRAL_SIGNING_KEY: signingKey, CORRAL_DEFAULT_PLAN: 'enterprise', LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout?.on('data', (d: Buffer) => output.push(d.toString()));
  child.stderr?.on('data', (d: Buffer) => output.push(d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const base = `http://127.0.0.1:${port}`;
  await until(async () => {
    if (child.exitCode !== null) throw new Error(`server exited early: ${output.join('')}`);
    return fetch(`${base}/healthz`).then((r) => r.ok, () => false);
  }, `${base} to be ready`, 45_000);
  return { base, child, output, exited };
}

describe.each(testDialects)('control bus on %s', (dialect) => {
  it('is in-process for the embedded store and LISTEN/NOTIFY on PostgreSQL', async () => {
    const ctx = await buildTestContext(dialect);
    expect(ctx.container.controlBus.transport).toBe(dialect === 'sqlite' ? 'memory' : 'postgres');
    await ctx.close();
  });
});

describe.each(testDialects.filter((d) => d === 'postgres'))('two processes on one %s', () => {
  let testDb: TestDb;
  let a: ServerProcess;
  let b: ServerProcess;
  const dataDirs: string[] = [];
  const sources: EventSource[] = [];

  beforeAll(async () => {
    testDb = await createTestDb('postgres');
    if (!testDb.pg) throw new Error('no PostgreSQL');
    // pg passes `options` to the server, so both processes work in the test's schema.
    const url = `${testDb.pg.url}?options=${encodeURIComponent(`-c search_path=${testDb.pg.schema}`)}`;
    const signingKey = randomBytes(32).toString('hex');
    for (let i = 0; i < 2; i++) dataDirs.push(mkdtempSync(path.join(os.tmpdir(), 'corral-two-')));
    [a, b] = await Promise.all([startServer(url, dataDirs[0] ?? '', signingKey), startServer(url, dataDirs[1] ?? '', signingKey)]);
  }, 120_000);

  afterAll(async () => {
    for (const es of sources) es.close();
    for (const p of [a, b]) if (p && p.child.exitCode === null) p.child.kill('SIGKILL');
    await testDb?.close();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  it('pushes a change made through one process to streams held by the other, and both stop cleanly', async () => {
    const orgId = randomUUID();
    const token = await signJwt(TEST_JWT_SECRET, { orgId, role: 'owner', subject: 'ops' }, 3600);
    const call = async (base: string, method: string, url: string, body?: unknown) => {
      const res = await fetch(`${base}${url}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      expect(res.status, `${method} ${url}: ${await res.clone().text()}`).toBe(200);
      return res.json() as Promise<Record<string, string>>;
    };
    const agent = await call(a.base, 'POST', '/v1/agents', { name: 'Shared' });
    const key = await call(a.base, 'POST', '/v1/keys', { name: 'sdk', scope: { kind: 'all' } });
    const stored = await testDb.db.kysely.selectFrom('agents').select('id').where('id', '=', agent.id ?? '').executeTakeFirst();
    expect(stored?.id).toBe(agent.id);

    const events: Array<{ type: string; data: Record<string, unknown> }> = [];
    const errors: Array<number | undefined> = [];
    const es = new EventSource(`${b.base}/v1/agents/${agent.id}/control`, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, 'x-api-key': key.key ?? '' } }),
    });
    sources.push(es);
    for (const type of ['init', 'kill_switch', 'policy_updated']) {
      es.addEventListener(type, (e) => events.push({ type, data: JSON.parse(e.data) }));
    }
    es.addEventListener('error', (e) => errors.push((e as { code?: number }).code));
    await until(() => events.some((e) => e.type === 'init'), 'init from B');

    await call(a.base, 'POST', `/v1/agents/${agent.id}/kill-switch`, { active: true });
    await until(() => events.some((e) => e.type === 'kill_switch'), 'kill_switch on B');
    expect(events.find((e) => e.type === 'kill_switch')?.data).toEqual({ active: true });

    const policy = await call(a.base, 'POST', `/v1/agents/${agent.id}/policies`, { policy: { mode: 'enforce', default: 'allow' }, activate: true });
    await until(() => events.some((e) => e.type === 'policy_updated'), 'policy_updated on B');
    expect(events.find((e) => e.type === 'policy_updated')?.data).toMatchObject({ version: 1, hash: policy.hash });

    await call(a.base, 'POST', `/v1/keys/${key.id}/revoke`);
    await until(() => errors.includes(401), "B to close the revoked key's stream and refuse the reconnect");

    // A stream still open on B when both get SIGTERM: they end it and exit 0.
    const key2 = await call(a.base, 'POST', '/v1/keys', { name: 'sdk2', scope: { kind: 'all' } });
    const held = await fetch(`${b.base}/v1/agents/${agent.id}/control`, { headers: { 'x-api-key': key2.key ?? '' } });
    const reader = held.body?.getReader();
    expect((await reader?.read())?.done).toBe(false);
    a.child.kill('SIGTERM');
    b.child.kill('SIGTERM');
    const drained = (async () => {
      while (!(await reader?.read())?.done) { /* reading to the end */ }
      return true;
    })();
    expect(await drained).toBe(true);
    expect(await a.exited).toBe(0);
    expect(await b.exited, b.output.join('')).toBe(0);
  }, 90_000);
});
