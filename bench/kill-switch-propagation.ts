/**
 * Kill-switch propagation: N SDK instances in this process, connected to a running server over
 * the control stream; time from the kill-switch POST until each instance blocks its next call.
 *
 *   npm run bench -- kill-switch-propagation [--instances 200]
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Corral, CorralBlockedError } from '../packages/sdk/src/index.js';
import { signJwt } from '../packages/server/src/features/auth/index.js';
import { flag, load, machine, percentile, startProcess, stopProcess, table } from './_bench-kit.js';

const instances = Number(flag('instances', '200'));
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'corral-bench-ks-'));
const secret = randomBytes(32).toString('hex');
const port = 18_000 + Math.floor(Math.random() * 1000);
const api = `http://127.0.0.1:${port}`;
const server = await startProcess('packages/server/src/main.ts', [], {
  PORT: String(port), INGEST_PORT: String(port + 1), HOST: '127.0.0.1', DATA_DIR: dataDir, CORRAL_JWT_SECRET: secret, CORRAL_DEFAULT_PLAN: 'enterprise', LOG_LEVEL: 'warn',
}, `${api}/healthz`);
const token = await signJwt(secret, { orgId: randomUUID(), role: 'owner', subject: 'bench' }, 3600);
const post = async <T>(url: string, body: unknown) =>
  (await (await fetch(`${api}${url}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as T;
const agent = await post<{ id: string }>('/v1/agents', { name: 'ks-bench' });
const key = await post<{ key: string }>('/v1/keys', { name: 'sdk', scope: { kind: 'restricted', resources: { agents: 'read', events: 'write' } } });

const quiet = { warn: () => undefined, error: () => undefined };
const clients = Array.from({ length: instances }, () =>
  new Corral({ apiKey: key.key, agent: agent.id, baseUrl: api, ingestUrl: `http://127.0.0.1:${port + 1}`, keyFile: null, flushIntervalMs: 60_000, logger: quiet }));
await Promise.all(clients.map((c) => c.ready()));
const stubFetch = (async () => new Response(null)) as unknown as typeof fetch;

// Each instance calls the stub in a loop (yielding to the event loop between calls) until a call is blocked.
let t0 = 0;
const blockedAfter = clients.map(async (c) => {
  const f = c.wrap(stubFetch);
  for (;;) {
    try {
      await f('https://api.example.com/v1/ping');
    } catch (err) {
      if (err instanceof CorralBlockedError) return performance.now() - t0;
      throw err;
    }
    await new Promise((r) => setTimeout(r, 1));
  }
});
await new Promise((r) => setTimeout(r, 200));
t0 = performance.now();
await post(`/v1/agents/${agent.id}/kill-switch`, { active: true, reason: 'bench' });
const postMs = performance.now() - t0;
const times = await Promise.all(blockedAfter);

console.log(`kill-switch-propagation: ${instances} SDK instances, one process, SQLite server; ${machine()}; load ${load()}`);
console.log(table([{
  instances, post_ms: postMs.toFixed(1), p50_ms: percentile(times, 0.5).toFixed(1), p99_ms: percentile(times, 0.99).toFixed(1), max_ms: Math.max(...times).toFixed(1),
}]));
await Promise.all(clients.map((c) => c.close()));
await stopProcess(server);
rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
