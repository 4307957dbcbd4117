import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signJwt } from '../src/features/auth/index.js';
import { accepts, type HttpAnswer, httpCall, SERVER_MAIN, type ServerProcess, startServerProcess } from './helpers/server-process.js';
import { pgUrl, testDialects } from './helpers/test-databases.js';

const SLOW = { timeout: 180_000 };
const migrationsIn = (names: string[]) => expect(names).toEqual(expect.arrayContaining(['0001-init']));

async function ownerToken(dataDir: string, orgId = randomUUID()): Promise<string> {
  const secret = readFileSync(path.join(dataDir, 'jwt-secret'), 'utf8').trim();
  return signJwt(secret, { orgId, role: 'owner', subject: 'ops' }, 600);
}

/** Both hosts answer, and the API works end to end on the store the process opened. */
async function checkServes(server: ServerProcess, token: string): Promise<string> {
  for (const base of [server.api, server.ingest]) {
    const health = await httpCall(`${base}/healthz`);
    expect(health, base).toEqual({ status: 200, body: '{"status":"ok"}' });
  }
  expect(server.api).not.toBe(server.ingest);
  const created = await httpCall(`${server.api}/v1/agents`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Proc' }),
  });
  expect(created.status, created.body).toBe(200);
  return (JSON.parse(created.body) as { id: string }).id;
}

describe('the service process on SQLite', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'corral-proc-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('starts both hosts, generates the JWT secret into DATA_DIR, migrates, and keeps all of it across a restart', SLOW, async () => {
    const first = await startServerProcess({ DATA_DIR: dataDir });
    const secretFile = path.join(dataDir, 'jwt-secret');
    const secret = readFileSync(secretFile, 'utf8').trim();
    expect(secret.length).toBeGreaterThanOrEqual(32);
    expect(statSync(secretFile).mode & 0o777).toBe(0o600);
    // The database holds key hashes and telemetry: owner-only like the secrets, its WAL too.
    for (const file of ['corral.sqlite', 'corral.sqlite-wal']) expect(statSync(path.join(dataDir, file)).mode & 0o777, file).toBe(0o600);
    const orgId = randomUUID();
    const token = await ownerToken(dataDir, orgId);
    const agentId = await checkServes(first, token);
    expect(await first.stop()).toEqual({ code: 0, signal: null });
    // Structured request logs: one JSON object a line, joined by the request id.
    const logs = first.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const incoming = logs.find((l) => (l.req as { url?: string } | undefined)?.url === '/v1/agents');
    expect(incoming).toMatchObject({ msg: 'incoming request', reqId: expect.any(String), req: { method: 'POST' } });
    expect(logs.find((l) => l.reqId === incoming?.reqId && l.msg === 'request completed')).toMatchObject({ res: { statusCode: 200 } });
    expect(first.output()).not.toContain(token);

    const sqlite = new Database(path.join(dataDir, 'corral.sqlite'), { readonly: true });
    migrationsIn(sqlite.prepare('SELECT name FROM kysely_migration').all().map((r) => (r as { name: string }).name));
    expect(sqlite.prepare('SELECT plan FROM organizations WHERE org_id = ?').get(orgId)).toEqual({ plan: 'free' });
    sqlite.close();

    const second = await startServerProcess({ DATA_DIR: dataDir });
    expect(readFileSync(secretFile, 'utf8').trim()).toBe(secret);
    const again = await httpCall(`${second.api}/v1/agents/${agentId}`, { headers: { authorization: `Bearer ${token}` } });
    expect(again.status).toBe(200);
    expect(await second.stop()).toEqual({ code: 0, signal: null });
  });

  it('finishes an in-flight request after SIGTERM, refuses new connections, and exits 0', SLOW, async () => {
    const server = await startServerProcess({ DATA_DIR: dataDir });
    const token = await ownerToken(dataDir);
    const body = JSON.stringify({ name: 'In flight' });
    let continued!: () => void;
    const headersArrived = new Promise<void>((resolve) => (continued = resolve));
    const req = httpRequest(`${server.api}/v1/agents`, {
      method: 'POST',
      agent: false,
      // The server's 100 Continue proves the request is routed and waiting for its body.
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': String(body.length), expect: '100-continue' },
    });
    const answer = new Promise<HttpAnswer>((resolve, reject) => {
      req.on('response', (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on('error', reject);
    });
    req.on('continue', () => continued());
    req.flushHeaders();
    await headersArrived;

    server.child.kill('SIGTERM');
    for (let i = 0; i < 500 && ((await accepts(server.api)) || (await accepts(server.ingest))); i++) await new Promise((r) => setTimeout(r, 20));
    expect(await accepts(server.api)).toBe(false);
    expect(await accepts(server.ingest)).toBe(false);
    expect(server.child.exitCode).toBeNull();

    req.end(body);
    const res = await answer;
    expect(res.status, res.body).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ name: 'In flight' });
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.output()).toContain('"signal":"SIGTERM"');
  });

  it('stops at once on SIGTERM after an event-stream client has gone', SLOW, async () => {
    const server = await startServerProcess({ DATA_DIR: dataDir });
    const token = await ownerToken(dataDir);
    const post = async (url: string, body: unknown) => JSON.parse((await httpCall(`${server.api}${url}`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
    })).body) as Record<string, string>;
    const { key } = await post('/v1/keys', { name: 'sdk', scope: { kind: 'all' } });
    const { id: agentId } = await post('/v1/agents', { name: 'streamed' });
    // A stream that gets its init and then loses its client without a word.
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(`${server.api}/v1/agents/${agentId}/control`, { agent: false, headers: { 'x-api-key': key ?? '', accept: 'text/event-stream' } }, (res) => {
        res.on('data', (chunk: Buffer) => {
          if (!chunk.toString().includes('event: init')) return;
          req.destroy();
          resolve();
        });
      });
      req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
      req.end();
    });
    await new Promise((r) => setTimeout(r, 200));
    const began = Date.now();
    expect(await server.stop()).toEqual({ code: 0, signal: null });
    expect(Date.now() - began).toBeLessThan(3000);
  });

  it('stops within the drain time even while a client stalls mid-upload', SLOW, async () => {
    const server = await startServerProcess({ DATA_DIR: dataDir });
    const token = await ownerToken(dataDir);
    const stalled = net.connect(Number(new URL(server.api).port), '127.0.0.1');
    stalled.on('error', () => undefined);
    await new Promise((resolve) => stalled.once('connect', resolve));
    // Headers and 5 of 1,000 declared body bytes, then nothing more.
    stalled.write(`POST /v1/agents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"nam`);
    await new Promise((r) => setTimeout(r, 300));
    const began = Date.now();
    expect(await server.stop()).toEqual({ code: 0, signal: null });
    // The drain waits DRAIN_TIMEOUT_MS (10 s) for the upload, then cuts it.
    expect(Date.now() - began).toBeLessThan(14_000);
    stalled.destroy();
  });

  it('names the variable to change when a port is taken, with exit code 2', SLOW, async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as net.AddressInfo;
    try {
      const run = spawnSync(process.execPath, [SERVER_MAIN], {
        cwd: path.resolve(import.meta.dirname, '../../..'),
        env: { PATH: process.env.PATH ?? '', PORT: String(port), INGEST_PORT: '0', OTLP_GRPC_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
        encoding: 'utf8',
        timeout: 120_000,
      });
      expect(run.status).toBe(2);
      expect(run.stderr).toContain(`PORT: port ${port} on 127.0.0.1 is already in use; set PORT to a free port`);
    } finally {
      holder.close();
    }
  });

  it('refuses to start on bad configuration, naming every bad variable, with exit code 2', SLOW, () => {
    const run = spawnSync(process.execPath, [SERVER_MAIN], {
      cwd: path.resolve(import.meta.dirname, '../../..'),
      env: { PATH: process.env.PATH ?? '', PORT: 'eighty', CORRAL_DEFAULT_PLAN: 'gold', DATA_DIR: dataDir },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/PORT/);
    expect(run.stderr).toMatch(/CORRAL_DEFAULT_PLAN/);
  });
});

// Runs wherever the suite has PostgreSQL (always under .ci/run), like every other store test.
describe.each(testDialects.filter((d) => d === 'postgres'))('the service process on %s', () => {
  const schema = `proc_${randomBytes(5).toString('hex')}`;
  let dataDir: string;
  const admin = () => new pg.Client({ connectionString: pgUrl ?? '' });
  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'corral-proc-pg-'));
    const client = admin();
    await client.connect();
    await client.query(`CREATE SCHEMA ${schema}`);
    await client.end();
  });
  afterAll(async () => {
    const client = admin();
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs on DATABASE_URL, migrating into the schema its options name, and stops with exit 0', SLOW, async () => {
    const url = new URL(pgUrl ?? '');
    url.searchParams.set('options', `-c search_path=${schema}`);
    const server = await startServerProcess({ DATA_DIR: dataDir, DATABASE_URL: url.toString() });
    const orgId = randomUUID();
    await checkServes(server, await ownerToken(dataDir, orgId));
    expect(server.output()).toContain('"store":"postgres"');
    expect(await server.stop()).toEqual({ code: 0, signal: null });

    const client = admin();
    await client.connect();
    const tables = await client.query<{ table_name: string }>('SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [schema]);
    expect(tables.rows.map((r) => r.table_name)).toEqual(expect.arrayContaining(['organizations', 'api_keys', 'agents', 'audit_log', 'kysely_migration']));
    migrationsIn((await client.query<{ name: string }>(`SELECT name FROM ${schema}.kysely_migration`)).rows.map((r) => r.name));
    expect((await client.query(`SELECT plan FROM ${schema}.organizations WHERE org_id = $1`, [orgId])).rows).toEqual([{ plan: 'free' }]);
    await client.end();
  });
});
