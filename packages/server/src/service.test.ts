import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { pgUrl } from '../test/helpers/test-databases.js';
import { loadConfig } from './config.js';
import { signJwt } from './features/auth/index.js';
import { startService } from './service.js';

const secret = 'service-stop-secret-long-enough-for-hs256-0123456789';

async function withDatabase<T>(run: (url: string) => Promise<T>): Promise<T> {
  const name = `corral_stop_${randomBytes(6).toString('hex')}`;
  const adminUrl = pgUrl ?? '';
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  try {
    return await run(url.toString());
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('stopping the service', () => {
  // PostgreSQL, because a table lock from another session holds a request inside its handler
  // without blocking this process (a SQLite lock would block the thread that has to stop).
  it.runIf(pgUrl)('lets a telemetry request whose client has gone finish before the store closes', { timeout: 60_000 }, async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'corral-stop-'));
    try {
      await withDatabase(async (databaseUrl) => {
        const service = await startService(loadConfig({
          DATA_DIR: dataDir, DATABASE_URL: databaseUrl, PORT: '0', INGEST_PORT: '0', OTLP_GRPC_PORT: '0', HOST: '127.0.0.1', CORRAL_JWT_SECRET: secret,
        }), pino({ level: 'silent' }));
        const base = service.urls.api ?? '';
        const token = await signJwt(secret, { orgId: randomUUID(), role: 'owner', subject: 'ops' }, 600);
        const post = async (url: string, body: unknown) => (await fetch(`${base}${url}`, {
          method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
        })).json() as Promise<Record<string, string>>;
        const { key } = await post('/v1/keys', { name: 'sdk', scope: { kind: 'all' } });
        const { id: agentId } = await post('/v1/agents', { name: 'worker' });

        const locker = new pg.Client({ connectionString: databaseUrl });
        await locker.connect();
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE rate_limit_state IN ACCESS EXCLUSIVE MODE');
        const at = new Date().toISOString();
        const events = Array.from({ length: 10 }, (_, i) => ({
          agent_id: agentId, timestamp: at, request_id: `stop-${i}`, method: 'GET', url_host: 'api.example.com', url_path: '/v1/items',
          status_code: 200, latency_ms: 12, policy_result: 'allowed',
        }));
        const client = httpRequest(`${base}/v1/telemetry`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' } });
        client.on('error', () => undefined);
        client.end(JSON.stringify({ events }));
        // The handler is waiting on the lock (rate limit stage); then its client goes away.
        await until(async () => (await locker.query(
          "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )).rowCount === 1);
        client.destroy();

        const stopped = service.stop();
        // Give a stop that did not wait the time to close the store under the handler.
        await new Promise((resolve) => setTimeout(resolve, 300));
        await locker.query('COMMIT');
        await stopped;

        const stored = await locker.query<{ n: string }>('SELECT count(*) AS n FROM telemetry_events');
        await locker.end();
        expect(Number(stored.rows[0]?.n)).toBe(10);
      });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('the OTLP/gRPC listener', () => {
  /** A port free right now (OTLP_GRPC_PORT=0 means off, so the test picks one). */
  const freePort = () => new Promise<number>((resolve, reject) => {
    const probe = createNetServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
  const canConnect = (port: number) => new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

  it('runs where the role serves ingest, not elsewhere, and stops with the service', { timeout: 60_000 }, async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'corral-grpc-'));
    try {
      const port = await freePort();
      const env = { DATA_DIR: dataDir, PORT: '0', INGEST_PORT: '0', HOST: '127.0.0.1', CORRAL_JWT_SECRET: secret, OTLP_GRPC_PORT: String(port) };
      const api = await startService(loadConfig({ ...env, CORRAL_ROLE: 'api' }), pino({ level: 'silent' }));
      expect(api.urls.otlpGrpc).toBeUndefined();
      expect(await canConnect(port)).toBe(false);
      await api.stop();

      const ingest = await startService(loadConfig({ ...env, CORRAL_ROLE: 'ingest' }), pino({ level: 'silent' }));
      expect(ingest.urls.otlpGrpc).toBe(`127.0.0.1:${port}`);
      expect(await canConnect(port)).toBe(true);
      expect(await ingest.stop()).toBe(true);
      expect(await canConnect(port)).toBe(false);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
