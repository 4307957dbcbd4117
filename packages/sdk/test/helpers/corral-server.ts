import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { signJwt } from '../../../server/src/features/auth/index.js';
import { TEST_JWT_SECRET } from '../../../server/test/helpers/build-test-app.js';
import { startServerProcess, type ServerProcess } from '../../../server/test/helpers/server-process.js';
import { createTestDb, type TestDb } from '../../../server/test/helpers/test-databases.js';

/** A real Corral process on the given store, with an organization, an agent and an SDK key. */
export interface RunningCorral {
  api: string;
  ingest: string;
  token: string;
  agentId: string;
  sdkKey: string;
  call<T = unknown>(method: string, url: string, body?: unknown): Promise<{ status: number; json: T }>;
  newAgent(name: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startCorral(dialect: 'sqlite' | 'postgres'): Promise<RunningCorral> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'corral-sdk-'));
  let testDb: TestDb | undefined;
  const env: Record<string, string> = {
    DATA_DIR: dataDir, CORRAL_JWT_SECRET: TEST_JWT_SECRET, CORRAL_DEFAULT_PLAN: 'enterprise',
    CORRAL_SIGNING_KEY: randomBytes(32).toString('hex'),
  };
  if (dialect === 'postgres') {
    testDb = await createTestDb('postgres');
    if (!testDb.pg) throw new Error('no PostgreSQL');
    await testDb.db.close().catch(() => undefined);
    env.DATABASE_URL = `${testDb.pg.url}?options=${encodeURIComponent(`-c search_path=${testDb.pg.schema}`)}`;
  }
  const proc: ServerProcess = await startServerProcess(env);
  const token = await signJwt(TEST_JWT_SECRET, { orgId: randomUUID(), role: 'owner', subject: 'sdk-test' }, 3600);
  const call = async <T>(method: string, url: string, body?: unknown) => {
    const res = await fetch(`${proc.api}${url}`, {
      method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, json: (text ? JSON.parse(text) : null) as T };
  };
  const newAgent = async (name: string) => (await call<{ id: string }>('POST', '/v1/agents', { name })).json.id;
  const agentId = await newAgent('sdk-e2e');
  const key = await call<{ key: string }>('POST', '/v1/keys', { name: 'sdk', scope: { kind: 'restricted', resources: { agents: 'read', events: 'write' } } });
  return {
    api: proc.api, ingest: proc.ingest, token, agentId, sdkKey: key.json.key, call, newAgent,
    async stop() {
      await proc.stop();
      // The process has closed its pool; the schema can go.
      await testDb?.close().catch(() => undefined);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A real local HTTP target that records what reached it. */
export async function startTarget(handler?: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<{ url: string; hits: Array<{ method: string; url: string; body: string }>; close(): Promise<void> }> {
  const hits: Array<{ method: string; url: string; body: string }> = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      hits.push({ method: req.method ?? '', url: req.url ?? '', body });
      if (handler) return handler(req, res, body);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return { url: `http://127.0.0.1:${port}`, hits, close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

/** A TCP proxy that can be cut (new and open connections refused) and restored: a real outage. */
export async function startCuttableProxy(target: string): Promise<{ url: string; cut(): void; restore(): void; close(): Promise<void> }> {
  const { hostname, port } = new URL(target);
  let down = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    if (down) return client.destroy();
    const upstream = net.connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    const end = () => { client.destroy(); upstream.destroy(); sockets.delete(client); sockets.delete(upstream); };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${addr.port}`,
    cut() { down = true; for (const s of sockets) s.destroy(); },
    restore() { down = false; },
    close: () => new Promise((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); }),
  };
}

export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * A real HTTP relay in front of the API host: forwards every request, except that the control
 * stream can be made unavailable (503) or replaced by a stream the test writes to.
 */
export async function startRelay(api: string): Promise<{
  url: string; mode: 'down' | 'inject'; send(event: string, data: unknown): void; connected(): boolean; close(): Promise<void>;
}> {
  let stream: ServerResponse | undefined;
  const server = createServer((req, res) => {
    const isControl = /^\/v1\/agents\/[^/]+\/control$/.test(req.url ?? '');
    if (isControl && relay.mode === 'down') return void res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"code":"unavailable","message":"down"}}');
    if (isControl) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
      res.write('retry: 2000\n\n');
      stream = res;
      return;
    }
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && !['host', 'connection', 'content-length'].includes(k)) headers[k] = v;
      fetch(`${api}${req.url ?? ''}`, { method: req.method ?? 'GET', headers, ...(body ? { body } : {}) })
        .then(async (up) => res.writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? 'application/json' }).end(await up.text()))
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  const relay = {
    url: `http://127.0.0.1:${port}`,
    mode: 'down' as 'down' | 'inject',
    send(event: string, data: unknown) {
      stream?.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    connected: () => stream !== undefined && !stream.writableEnded,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
  return relay;
}
