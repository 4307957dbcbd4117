import Database from 'better-sqlite3';
import { EventSource } from 'eventsource';
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { signJwt } from '../src/features/auth/index.js';
import { formatEvent } from '../src/lib/sse-message.js';
import { buildTestContext, TEST_JWT_SECRET } from './helpers/build-test-app.js';
import { httpCall, type ServerProcess, startServerProcess } from './helpers/server-process.js';
import { event } from './helpers/telemetry-fixtures.js';
import { pgUrl, testDialects } from './helpers/test-databases.js';

/**
 * Faults the service must ride out without a restart and without a 500: PostgreSQL going away
 * under load (through a real TCP proxy this test cuts, never touching the shared server), the
 * SQLite disk filling up (a real tmpfs of a few MB), and a control-stream client that never reads.
 */
const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A TCP proxy to PostgreSQL. `cut` drops every connection and refuses new ones, as a restarting server does. */
async function startProxy(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;
  const proxy = {
    get port() {
      return port;
    },
    async open() {
      const s = net.createServer((client) => {
        const upstream = net.connect(target.port, target.host);
        for (const sock of [client, upstream]) {
          sockets.add(sock);
          sock.on('error', () => undefined);
          sock.on('close', () => {
            sockets.delete(sock);
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream);
        upstream.pipe(client);
      });
      await new Promise<void>((resolve) => s.listen(port, '127.0.0.1', resolve));
      port = (s.address() as net.AddressInfo).port;
      server = s;
    },
    async cut() {
      const s = server;
      server = undefined;
      for (const sock of sockets) sock.destroy();
      if (s) await new Promise((resolve) => s.close(resolve));
    },
  };
  await proxy.open();
  cleanups.push(() => proxy.cut());
  return proxy;
}

async function ownerCalls(base: () => string) {
  const orgId = randomUUID();
  const token = await signJwt(TEST_JWT_SECRET, { orgId, role: 'owner', subject: 'ops' }, 3600);
  const call = (method: string, url: string, body?: unknown) => httpCall(`${base()}${url}`, {
    method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const ok = async (method: string, url: string, body?: unknown) => {
    const res = await call(method, url, body);
    if (res.status !== 200) throw new Error(`${method} ${url}: ${res.status} ${res.body}`);
    return JSON.parse(res.body) as Record<string, string>;
  };
  return { orgId, token, call, ok };
}

describe.each(testDialects.filter((d) => d === 'postgres'))('%s going away under load', () => {
  it('answers 503 with Retry-After at once during the outage, serves again after it without a restart, and streams resume', { timeout: 180_000 }, async () => {
    const target = new URL(pgUrl ?? '');
    const proxy = await startProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const schema = `faults_${randomBytes(5).toString('hex')}`;
    const admin = new pg.Client({ connectionString: pgUrl ?? '' });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    cleanups.push(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    });
    const viaProxy = new URL(pgUrl ?? '');
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    viaProxy.searchParams.set('options', `-c search_path=${schema}`);
    const dataDir = mkdtempSync(path.join(tmpdir(), 'corral-faults-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const server: ServerProcess = await startServerProcess({
      DATA_DIR: dataDir, DATABASE_URL: viaProxy.toString(), CORRAL_JWT_SECRET: TEST_JWT_SECRET,
    });
    cleanups.push(() => void server.child.kill('SIGKILL'));
    const { orgId, ok, call } = await ownerCalls(() => server.api);
    const agent = await ok('POST', '/v1/agents', { name: 'Weathering' });
    const { key } = await ok('POST', '/v1/keys', { name: 'sdk', scope: { kind: 'all' } });

    // An SDK's control stream, reconnecting on its own as SDKs do.
    const events: Array<{ type: string; data: string }> = [];
    const es = new EventSource(`${server.api}/v1/agents/${agent.id}/control`, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, 'x-api-key': key ?? '' } }),
    });
    cleanups.push(() => es.close());
    for (const type of ['init', 'kill_switch']) es.addEventListener(type, (e) => events.push({ type, data: String(e.data) }));
    for (let i = 0; i < 400 && !events.some((e) => e.type === 'init'); i++) await sleep(25);
    expect(events.map((e) => e.type)).toContain('init');

    // Load: telemetry and reads, all the while.
    const answers: Array<{ phase: string; status: number; ms: number; body: string; retryAfter: string | undefined }> = [];
    let phase = 'before';
    let loading = true;
    const refusedBatches: unknown[][] = [];
    let storedEvents = 0;
    const load = (async () => {
      while (loading) {
        const batch = Array.from({ length: 20 }, () => event(agent.id ?? ''));
        const began = Date.now();
        const sent = await httpCall(`${server.api}/v1/telemetry`, {
          method: 'POST', headers: { 'x-api-key': key ?? '', 'content-type': 'application/json' }, body: JSON.stringify({ events: batch }),
        }).catch((err: Error) => ({ status: 0, body: err.message }));
        answers.push({ phase, status: sent.status, ms: Date.now() - began, body: sent.body, retryAfter: undefined });
        if (sent.status === 200) storedEvents += batch.length;
        else refusedBatches.push(batch);
        const readBegan = Date.now();
        const read = await new Promise<{ status: number; body: string; retryAfter: string | undefined }>((resolve, reject) => {
          void fetch(`${server.api}/v1/agents/${agent.id}`, { headers: { 'x-api-key': key ?? '' } }).then(async (res) =>
            resolve({ status: res.status, body: await res.text(), retryAfter: res.headers.get('retry-after') ?? undefined }), reject);
        }).catch((err: Error) => ({ status: 0, body: err.message, retryAfter: undefined }));
        answers.push({ phase, ...read, ms: Date.now() - readBegan });
        await sleep(20);
      }
    })();
    await sleep(1_000);

    phase = 'outage';
    await proxy.cut();
    await sleep(3_000);
    expect(server.child.exitCode, server.output().slice(-4000)).toBeNull();
    const metricsDuringOutage = await httpCall(`${server.api}/metrics`);
    phase = 'after';
    await proxy.open();
    // Serving again, in the same process, within moments.
    let recoveredAfterMs = 0;
    const restored = Date.now();
    while ((await call('GET', `/v1/agents/${agent.id}`)).status !== 200) {
      if (Date.now() - restored > 20_000) throw new Error('not serving 20 s after the database came back');
      await sleep(100);
    }
    recoveredAfterMs = Date.now() - restored;
    await sleep(1_000);
    loading = false;
    await load;

    const during = answers.filter((a) => a.phase === 'outage');
    expect(during.length).toBeGreaterThan(4);
    // Every answer during the outage came quickly, as a 503 with the contract's body and Retry-After.
    for (const a of during.filter((x) => x.status !== 200)) {
      expect(a.status, a.body).toBe(503);
      expect(JSON.parse(a.body)).toMatchObject({ error: { code: 'service_unavailable', message: 'The database is unavailable; retry shortly' } });
      expect(a.ms).toBeLessThan(2_000);
    }
    expect(during.filter((a) => a.status === 503).length).toBeGreaterThan(2);
    expect(during.some((a) => a.retryAfter !== undefined && /^\d+$/.test(a.retryAfter))).toBe(true);
    expect(answers.filter((a) => a.status >= 500 && a.status !== 503)).toEqual([]);
    expect(metricsDuringOutage.status).toBe(200);
    expect(recoveredAfterMs).toBeLessThan(20_000);
    expect(answers.filter((a) => a.phase === 'after').slice(-4).map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(server.child.exitCode).toBeNull();

    // The stream resumes: a kill switch set after the outage reaches it (reconnected, with the current state).
    await ok('POST', `/v1/agents/${agent.id}/kill-switch`, { active: true, reason: 'after the outage' });
    for (let i = 0; i < 800 && !events.some((e) => e.type === 'kill_switch' && e.data.includes('true')); i++) await sleep(25);
    expect(events.some((e) => e.type === 'kill_switch' && e.data.includes('"active":true'))).toBe(true);

    // No refused batch was half-written: re-sent, each is stored once, and the total is exact.
    for (const batch of refusedBatches) {
      const res = await httpCall(`${server.api}/v1/telemetry`, {
        method: 'POST', headers: { 'x-api-key': key ?? '', 'content-type': 'application/json' }, body: JSON.stringify({ events: batch }),
      });
      expect(res.status).toBe(200);
      storedEvents += batch.length;
    }
    const counted = await admin.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.telemetry_events WHERE org_id = $1`, [orgId]);
    expect(Number(counted.rows[0]?.n)).toBe(storedEvents);
    es.close();
    expect(await server.stop()).toEqual({ code: 0, signal: null });
  });
});

describe('SQLite on a full disk', () => {
  it('answers 503 when the disk fills, keeps reading, writes again once there is room, and the file stays intact', { timeout: 180_000 }, async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'corral-full-'));
    // A real small file system: root can mount a tmpfs (CI and development machines run as root).
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=3m', 'tmpfs', dataDir]);
    cleanups.push(() => {
      execFileSync('umount', ['-l', dataDir]);
      rmSync(dataDir, { recursive: true, force: true });
    });
    const server = await startServerProcess({ DATA_DIR: dataDir, CORRAL_JWT_SECRET: TEST_JWT_SECRET, CORRAL_DEFAULT_PLAN: 'enterprise' });
    cleanups.push(() => void server.child.kill('SIGKILL'));
    const { ok, call, orgId } = await ownerCalls(() => server.api);
    const agent = await ok('POST', '/v1/agents', { name: 'Filling' });
    const { key } = await ok('POST', '/v1/keys', { name: 'sdk', scope: { kind: 'all' } });
    const post = (events: unknown[]) => httpCall(`${server.api}/v1/telemetry`, {
      method: 'POST', headers: { 'x-api-key': key ?? '', 'content-type': 'application/json' }, body: JSON.stringify({ events }),
    });

    let acknowledged = 0;
    let full: { status: number; body: string } | undefined;
    for (let i = 0; i < 200 && !full; i++) {
      const res = await post(Array.from({ length: 200 }, () => event(agent.id ?? '', { url_path: `/v1/${randomBytes(40).toString('hex')}` })));
      if (res.status === 200) acknowledged += 200;
      else full = res;
    }
    expect(full?.status, full?.body).toBe(503);
    expect(JSON.parse(full?.body ?? '{}')).toMatchObject({ error: { code: 'service_unavailable', message: 'The store cannot write: its disk is full or failing' } });
    // Other writes while the disk is full: refused the same way, never a 500.
    for (let i = 0; i < 5; i++) {
      const agentWrite = await call('POST', '/v1/agents', { name: `No room ${i}`, description: 'd'.repeat(1000) });
      expect([200, 503], `${agentWrite.status} ${agentWrite.body}\n${server.output().split('\n').filter((l) => l.includes('"level":50')).slice(-3).join('\n')}`).toContain(agentWrite.status);
    }
    expect((await call('GET', `/v1/agents/${agent.id}`)).status).toBe(200);

    // Room again, the same process writes again.
    execFileSync('mount', ['-o', 'remount,size=64m', dataDir]);
    let resumed = 0;
    for (let i = 0; i < 50 && resumed === 0; i++) {
      const res = await post([event(agent.id ?? '')]);
      if (res.status === 200) resumed = 1;
      else await sleep(200);
    }
    expect(resumed).toBe(1);
    acknowledged += 1;
    expect(await server.stop()).toEqual({ code: 0, signal: null });

    const db = new Database(path.join(dataDir, 'corral.sqlite'), { readonly: true });
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(db.prepare('SELECT count(*) AS n FROM telemetry_events WHERE org_id = ?').get(orgId)).toEqual({ n: acknowledged });
    db.close();
  });
});

describe.each(testDialects)('a control-stream client that never reads, on %s', (dialect) => {
  it('costs the server a bounded queue however many changes it misses', { timeout: 60_000 }, async () => {
    const ctx = await buildTestContext(dialect);
    cleanups.push(() => ctx.close());
    await ctx.api.listen({ port: 0, host: '127.0.0.1' });
    const { orgId, token } = await ctx.newOrg();
    const { key } = await ctx.createKey(token);
    const agentId = (await ctx.request({ method: 'POST', url: '/v1/agents', token, payload: { name: 'Stalled' } })).json<{ id: string }>().id;
    const { port } = ctx.api.server.address() as net.AddressInfo;
    const stalled = net.connect(port, '127.0.0.1');
    stalled.on('error', () => undefined);
    cleanups.push(() => stalled.destroy());
    await new Promise((resolve) => stalled.once('connect', resolve));
    stalled.write(`GET /v1/agents/${agentId}/control HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${key}\r\nAccept: text/event-stream\r\n\r\n`);
    stalled.pause();
    for (let i = 0; i < 200 && ctx.container.streamHub.stats().streams === 0; i++) await sleep(10);
    expect(ctx.container.streamHub.stats().streams).toBe(1);

    // Policies with a large description each: every activation pushes a policy_updated message.
    const description = 'd'.repeat(1000);
    let maxBuffered = 0;
    let maxPending = 0;
    for (let i = 0; i < 300; i++) {
      const res = await ctx.request({
        method: 'POST', url: `/v1/agents/${agentId}/policies`, token,
        payload: { policy: { mode: 'enforce', default: i % 2 === 0 ? 'allow' : 'deny' }, activate: true, description },
      });
      expect(res.statusCode, res.body).toBe(200);
      await ctx.request({ method: 'POST', url: `/v1/agents/${agentId}/kill-switch`, token, payload: { active: i % 2 === 0 } });
      const stats = ctx.container.streamHub.stats();
      maxBuffered = Math.max(maxBuffered, stats.bufferedBytes);
      maxPending = Math.max(maxPending, stats.pendingMessages);
    }
    // 600 changes missed; the server holds at most one socket buffer and the latest message of each kind.
    expect(maxPending).toBeLessThanOrEqual(2);
    expect(maxBuffered).toBeLessThan(64 * 1024);

    // Those messages are small and the kernel's buffers took them. Now 50 MB more to the same
    // stream, 256 KiB a message, through the hub that the route put it in: the server's memory
    // stays flat, since a later message of a kind replaces the waiting one.
    const group = ctx.container.streamHub.group(orgId, agentId);
    if (!group) throw new Error('the stream has no group');
    const heapBefore = process.memoryUsage().heapUsed;
    const big = 'z'.repeat(256 * 1024);
    for (let i = 0; i < 200; i++) {
      const kind = i % 2 === 0 ? 'kill_switch' : 'policy_updated';
      ctx.container.streamHub.broadcast(group, kind, formatEvent({ event: kind, data: `${i}:${big}` }));
      const stats = ctx.container.streamHub.stats();
      maxBuffered = Math.max(maxBuffered, stats.bufferedBytes);
      maxPending = Math.max(maxPending, stats.pendingMessages);
      if (i % 20 === 0) await sleep(5);
    }
    expect(maxPending).toBeLessThanOrEqual(2);
    expect(maxBuffered).toBeLessThan(4 * big.length);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(20 * 1024 * 1024);
  });
});
