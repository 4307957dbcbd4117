import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signJwt } from '../src/features/auth/index.js';
import { TEST_JWT_SECRET } from './helpers/build-test-app.js';
import { type LocalCluster, startLocalCluster } from './helpers/local-cluster.js';
import { decodeExportResponse, exportCall, httpSpan, otlpJson, otlpProtobuf, type SpanSpec } from './helpers/otlp-fixtures.js';
import { event, newSigner } from './helpers/telemetry-fixtures.js';
import { pgUrl, testDialects } from './helpers/test-databases.js';
import { startWebhookReceiver, type WebhookReceiver } from './helpers/webhook-receiver.js';

/**
 * The scale-out shape of docs/deployment.md, started by the script operators use
 * (deploy/local-cluster.mjs): two `api` processes and one `ingest` process on one PostgreSQL,
 * then two `worker` processes joining them. Every process has its own DATA_DIR; they share only
 * the database and the secrets. PostgreSQL only: the split roles are a PostgreSQL shape.
 */
const MINUTE = 60_000;
const RATE_LIMIT = 300;

/** A port free now, for a listener that cannot be given 0 (OTLP/gRPC: 0 turns it off). */
const freePort = () => new Promise<number>((resolve, reject) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address() as { port: number };
    probe.close(() => resolve(port));
  }).on('error', reject);
});

describe.each(testDialects.filter((d) => d === 'postgres'))('a split deployment on one %s', () => {
  const schema = `cluster_${randomBytes(5).toString('hex')}`;
  const dir = mkdtempSync(path.join(tmpdir(), 'corral-cluster-test-'));
  const admin = new pg.Client({ connectionString: pgUrl ?? '' });
  const url = new URL(pgUrl ?? 'postgres://unset');
  url.searchParams.set('options', `-c search_path=${schema}`);
  const env = {
    DATABASE_URL: url.toString(), CORRAL_JWT_SECRET: TEST_JWT_SECRET, CORRAL_DEFAULT_PLAN: 'free',
    CORRAL_RATE_LIMIT_FREE: String(RATE_LIMIT), CORRAL_WEBHOOK_ALLOW_PRIVATE: '1', LOG_LEVEL: 'info',
  };
  let hosts: LocalCluster;
  let workers: LocalCluster | undefined;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    receiver = await startWebhookReceiver('/alerts');
    hosts = await startLocalCluster({ api: 2, ingest: 1, workers: 0, dir }, { ...env, OTLP_GRPC_PORT: String(await freePort()) });
  }, 180_000);

  afterAll(async () => {
    for (const c of [workers, hosts]) if (c && c.child.exitCode === null) c.child.kill('SIGKILL');
    for (const p of [...(workers?.processes ?? []), ...(hosts?.processes ?? [])]) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch { /* already gone */ }
    }
    await receiver?.stop();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  });

  async function owner() {
    const orgId = randomUUID();
    const token = await signJwt(TEST_JWT_SECRET, { orgId, role: 'owner', subject: 'ops' }, 3600);
    const call = async <T = Record<string, string>>(base: string, method: string, route: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${base}${route}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      expect(res.status, `${method} ${route}: ${text}`).toBe(200);
      return JSON.parse(text) as T;
    };
    return { orgId, token, call };
  }

  /** A batch as an SDK sends it: signed (the ingest host requires it), with the key pair registered on first use. */
  const signer = newSigner();
  const postBatch = (base: string, apiKey: string, events: unknown[]) => {
    const body = JSON.stringify({ events });
    return fetch(`${base}/v1/telemetry`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-corral-signature': signer.sign(body), 'x-corral-public-key': signer.publicKeyHex },
      body,
    });
  };

  it('starts every role with its own DATA_DIR and the shared secrets', () => {
    expect(hosts.processes.map((p) => p.role).sort()).toEqual(['api', 'api', 'ingest']);
    expect(new Set([...hosts.api, ...hosts.ingest]).size).toBe(3);
    expect(hosts.otlp_grpc).toHaveLength(1);
  });

  it('pushes a kill switch set through one API process to a control stream held by the other', async () => {
    const { call } = await owner();
    const [a, b] = hosts.api as [string, string];
    const agent = await call(a, 'POST', '/v1/agents', { name: 'Clustered' });
    const { key } = await call(a, 'POST', '/v1/keys', { name: 'sdk', scope: { kind: 'all' } });
    const stream = await fetch(`${b}/v1/agents/${agent.id}/control`, { headers: { 'x-api-key': key ?? '', accept: 'text/event-stream' } });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    let text = '';
    const readUntil = async (marker: string) => {
      while (!text.includes(marker)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${marker}: ${text}`);
        text += Buffer.from(value).toString();
      }
    };
    await readUntil('event: init');
    await call(a, 'POST', `/v1/agents/${agent.id}/kill-switch`, { active: true, reason: 'cluster drill' });
    await readUntil('event: kill_switch');
    expect(text.slice(text.indexOf('event: kill_switch'))).toMatch(/"active":true/);
    await reader.cancel();
  });

  it('holds one organization to its rate limit across every process together', async () => {
    const { call } = await owner();
    const agent = await call(hosts.api[0]!, 'POST', '/v1/agents', { name: 'Limited' });
    const { key } = await call(hosts.api[0]!, 'POST', '/v1/keys', { name: 'sdk', scope: { kind: 'all' } });
    const targets = [hosts.api[0]!, hosts.api[1]!, hosts.ingest[0]!];
    let accepted = 0;
    const refused: Array<{ status: number; retryAfter: string | null }> = [];
    // Nine batches of 50, three through each process: the limit is 300 a minute for all of them.
    for (let i = 0; i < 9; i++) {
      const res = await postBatch(targets[i % 3]!, key ?? '', Array.from({ length: 50 }, () => event(agent.id ?? '')));
      if (res.status === 200) accepted += 50;
      else refused.push({ status: res.status, retryAfter: res.headers.get('retry-after') });
    }
    expect(accepted).toBe(RATE_LIMIT);
    expect(refused).toHaveLength(3);
    for (const r of refused) expect(r).toMatchObject({ status: 429, retryAfter: expect.stringMatching(/^\d+$/) });
  });

  it('stores telemetry sent through any process once, re-sends through another included, and exactly one of two workers fires the alert', { timeout: 150_000 }, async () => {
    const { orgId, call } = await owner();
    const [a, b] = hosts.api as [string, string];
    const agent = await call(a, 'POST', '/v1/agents', { name: 'Checkout Bot' });
    const { key } = await call(b, 'POST', '/v1/keys', { name: 'sdk', scope: { kind: 'all' } });
    // Every way Corral's own batches enter the cluster (OTLP, which makes its own agents, has the next test).
    const ingestPaths: Array<{ name: string; send: (events: unknown[]) => Promise<Response> }> = [
      { name: 'telemetry on api-1', send: (events) => postBatch(a, key ?? '', events) },
      { name: 'telemetry on api-2', send: (events) => postBatch(b, key ?? '', events) },
      { name: 'telemetry on ingest-1', send: (events) => postBatch(hosts.ingest[0]!, key ?? '', events) },
    ];
    // Three of every four calls fail, in the last whole minute the evaluator reads and in the
    // minute under way, so the reading is the same if the workers start after the next slot.
    const now = Date.now();
    const slot = Math.floor((now - 10_000) / MINUTE) * MINUTE;
    const spans = [[slot - MINUTE, slot], [slot, now - 1_000]] as const;
    const batches = ingestPaths.map((_, p) => spans.flatMap(([from, to]) => Array.from({ length: 20 }, (_e, i) => event(agent.id ?? '', {
      at: from + Math.floor(((to - from) * (i + p / 3)) / 20), policy_result: i % 4 === 3 ? 'allowed' : 'error', status_code: i % 4 === 3 ? 200 : 502,
    }))));
    for (const [p, path] of ingestPaths.entries()) {
      const res = await path.send(batches[p]!);
      expect(res.status, `${path.name}: ${await res.clone().text()}`).toBe(200);
      expect(await res.json()).toMatchObject({ accepted: 40 });
    }
    // A client that timed out re-sends its batch through another process: nothing is stored twice
    // (the organization's 300 a minute covers the 240 sent).
    for (const [p, path] of ingestPaths.entries()) {
      const res = await path.send(batches[(p + 1) % batches.length]!);
      expect(res.status, path.name).toBe(200);
    }
    const stored = await admin.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.telemetry_events WHERE org_id = $1`, [orgId]);
    expect(Number(stored.rows[0]?.n)).toBe(120);
    const rollup = await admin.query<{ total: string; errors: string }>(
      `SELECT sum(total_calls) AS total, sum(error_calls) AS errors FROM ${schema}.telemetry_rollups WHERE org_id = $1 AND grain = $2 AND agent_id = $3`,
      [orgId, MINUTE, agent.id],
    );
    expect(rollup.rows[0]).toEqual({ total: '120', errors: '90' });

    const rule = await call(a, 'POST', '/v1/alerts', {
      agent_id: agent.id, condition_type: 'error_rate', threshold: 50, window_minutes: 1, channel: 'webhook', channel_target: receiver.url,
    });
    // A new rule is first due at the next minute; make it due now, as if the workers had been down
    // over its slot, so both evaluate it the moment they start instead of a minute later.
    await admin.query(`UPDATE ${schema}.alert_rules SET next_eval_at = 0 WHERE id = $1`, [rule.id]);
    workers = await startLocalCluster({ api: 0, ingest: 0, workers: 2, dir }, env);
    expect(workers.processes.map((p) => p.role)).toEqual(['worker', 'worker']);
    const [delivered] = await receiver.received(1, 60_000).catch((err: Error) => {
      const logs = workers?.processes.map((p) => `${p.name}:\n${readFileSync(p.log, 'utf8').split('\n').filter((l) => /"level":[4-6]0/.test(l)).join('\n')}`);
      throw new Error(`${err.message}; the workers' warnings and errors:\n${logs?.join('\n')}`);
    });
    // Three calls in four failed; which of them the evaluator's window holds depends on when the
    // workers came up, so the rate is over the threshold, not exactly 75.
    const firing = JSON.parse(delivered!.body) as { type: string; data: { state: string; value: number } };
    expect(firing).toMatchObject({ type: 'alert.firing', data: { state: 'firing' } });
    expect(firing.data.value).toBeGreaterThan(50);
    // Both evaluators ran at start (each evaluates what is due at once); give a second firing time to show.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(receiver.requests).toHaveLength(1);
    const history = await admin.query(`SELECT state FROM ${schema}.alert_history WHERE alert_id = $1`, [rule.id]);
    expect(history.rows).toEqual([{ state: 'firing' }]);
    const notifications = await admin.query(`SELECT status, attempts FROM ${schema}.alert_notifications WHERE alert_id = $1`, [rule.id]);
    expect(notifications.rows).toEqual([{ status: 'delivered', attempts: 1 }]);
    // Each worker serves /metrics on its own port: both ran a round, and one delivered.
    const scraped = await Promise.all(workers.processes.map(async (p) => (await fetch(`${p.url}/metrics`)).text()));
    const valueOf = (text: string, series: string) => Number(text.split('\n').find((l) => l.startsWith(`${series} `))?.split(' ')[1] ?? 0);
    for (const text of scraped) expect(valueOf(text, 'corral_alert_evaluation_rounds_total')).toBeGreaterThanOrEqual(1);
    expect(scraped.map((t) => valueOf(t, 'corral_alert_delivery_attempts_total{outcome="delivered"}')).sort()).toEqual([0, 1]);
  });

  it('stores OTLP spans sent over HTTP and gRPC once, an exporter retry through the other transport included, under one agent', async () => {
    const { token, call } = await owner();
    const { key } = await call(hosts.api[0]!, 'POST', '/v1/keys', { name: 'otel', scope: { kind: 'all' } });
    const start = Date.now() - 5_000;
    const spans: SpanSpec[] = Array.from({ length: 12 }, (_, i) => httpSpan({ start: start + i, status: i % 3 === 0 ? 2 : 0 }));
    const service = `clustered-otlp-${randomBytes(3).toString('hex')}`;
    // Spans 0-7 over OTLP/HTTP (JSON) and, at the same moment, 4-11 over OTLP/gRPC: the first
    // export of a new service from both transports at once, with four spans in both requests.
    const [http, grpcResult] = await Promise.all([
      fetch(`${hosts.ingest[0]}/v1/traces`, {
        method: 'POST', headers: { 'x-api-key': key ?? '', 'content-type': 'application/json' },
        body: JSON.stringify(otlpJson([{ service, spans: spans.slice(0, 8) }])),
      }),
      exportCall(hosts.otlp_grpc[0]!, otlpProtobuf([{ service, spans: spans.slice(4) }]), key, false),
    ]);
    expect(http.status, await http.clone().text()).toBe(200);
    expect(grpcResult.error).toBeUndefined();
    expect(decodeExportResponse(grpcResult.response ?? Buffer.alloc(0))).toEqual({});
    // An exporter that timed out re-sends all twelve, gzip-compressed over gRPC: the spans first
    // sent over HTTP arrive again over the other transport.
    const retried = await exportCall(hosts.otlp_grpc[0]!, otlpProtobuf([{ service, spans }]), key, true);
    expect(retried.error).toBeUndefined();

    const read = async <T>(route: string) => (await (await fetch(`${hosts.api[1]}${route}`, { headers: { authorization: `Bearer ${token}` } })).json()) as T;
    const agents = (await read<{ data: Array<{ id: string; name: string }> }>('/v1/agents?limit=100')).data.filter((a) => a.name === service);
    expect(agents).toHaveLength(1);
    const stored = await read<{ data: Array<{ span_id: string; policy_result: string }> }>(`/v1/dashboard/events?agent_id=${agents[0]!.id}&limit=100`);
    expect(stored.data.map((e) => e.span_id).sort()).toEqual(spans.map((s) => s.spanId).sort());
    expect(stored.data.filter((e) => e.policy_result === 'error')).toHaveLength(4);
    const stats = await read<{ total_calls: number; error_calls: number }>(`/v1/dashboard/stats?from=${new Date(start - MINUTE).toISOString()}`);
    expect(stats).toMatchObject({ total_calls: 12, error_calls: 4 });
  });

  it('stops every process with SIGTERM, exit 0', async () => {
    expect(workers).toBeDefined();
    expect(await workers?.stop()).toBe(0);
    expect(await hosts.stop()).toBe(0);
  });
});
