/**
 * OTLP ingest throughput beside the native path:
 *   `npm run bench -- otlp [--duration 15] [--connections 4] [--stores sqlite,postgres]`
 *
 * For each store it starts the real service (packages/server/src/main.ts) as its own process
 * with OTLP/gRPC on, and this process, as the load generator, sends for --duration seconds each:
 *   1. native    POST /v1/telemetry, JSON batches of 512 events (autocannon);
 *   2. OTLP/HTTP POST /v1/traces on the ingest host, protobuf requests of 512 spans (autocannon);
 *   3. OTLP/gRPC TraceService/Export, the same protobuf requests (grpc-js, --connections calls in flight).
 * The spans are what the events are: HTTP client spans, one in four a GenAI call with model and
 * token counts, and the events carry the trace and span ids the spans have. Every request
 * carries new ids (a fresh trace id per request), so nothing is skipped as a duplicate.
 */
import * as grpc from '@grpc/grpc-js';
import autocannon from 'autocannon';
import protobuf from 'protobufjs';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createDatabase } from '../packages/server/src/db/database.js';
import { SQLITE_FILE } from '../packages/server/src/service.js';
import { signJwt } from '../packages/server/src/features/auth/index.js';
import { flag, load, machine, repoRoot, startProcess, stopProcess, table } from './_bench-kit.js';

const duration = Number(flag('duration', '15'));
const connections = Number(flag('connections', '4'));
const stores = flag('stores', 'sqlite,postgres').split(',');
const pgAdminUrl = flag('pg', 'postgres://postgres@127.0.0.1:5432/postgres');
const BATCH = 512;
const AGENTS = 10;
const secret = 'bench-secret-that-is-long-enough-for-hs256-0123456789';

const root = new protobuf.Root();
root.resolvePath = (_origin, target) => path.join(repoRoot, 'packages/server/proto', target);
root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto');
const RequestType = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');

const isGenAi = (i: number) => i % 4 === 0;

/**
 * One protobuf request of 512 spans over ten services, encoded once; each call copies it and
 * writes a new trace id at every span's trace_id offset (found by a marker), so ids are fresh
 * without encoding 512 spans per request in the load generator.
 */
function otlpFactory(): () => Buffer {
  const marker = Buffer.from('f1e2d3c4b5a6978877665544332211f0', 'hex');
  const start = BigInt(Date.now()) * 1_000_000n;
  const resourceSpans = Array.from({ length: AGENTS }, (_, a) => ({
    resource: { attributes: [{ key: 'service.name', value: { stringValue: `bench-service-${a}` } }] },
    scopeSpans: [{
      scope: { name: 'bench' },
      spans: Array.from({ length: BATCH / AGENTS + (a < BATCH % AGENTS ? 1 : 0) }, (_, k) => {
        const i = k * AGENTS + a;
        const attributes = isGenAi(i)
          ? [
            ['gen_ai.provider.name', { stringValue: 'openai' }], ['gen_ai.operation.name', { stringValue: 'chat' }],
            ['gen_ai.request.model', { stringValue: 'gpt-4o-mini' }], ['gen_ai.usage.input_tokens', { intValue: 800 + i }],
            ['gen_ai.usage.output_tokens', { intValue: 120 }], ['server.address', { stringValue: 'api.openai.com' }],
          ]
          : [
            ['http.request.method', { stringValue: i % 3 === 0 ? 'POST' : 'GET' }], ['url.full', { stringValue: `https://api${i % 20}.example.com/v1/resources/${i}/items` }],
            ['server.address', { stringValue: `api${i % 20}.example.com` }], ['http.response.status_code', { intValue: i % 33 === 0 ? 502 : 200 }],
          ];
        return {
          traceId: marker, spanId: Buffer.from(i.toString(16).padStart(16, '0'), 'hex'), name: 'call', kind: 3,
          startTimeUnixNano: (start + BigInt(i) * 1000n).toString(), endTimeUnixNano: (start + BigInt(i) * 1000n + BigInt(5 + ((i * 7919) % 400)) * 1_000_000n).toString(),
          attributes: attributes.map(([key, value]) => ({ key, value })), status: { code: i % 33 === 0 ? 2 : 0 },
        };
      }),
    }],
  }));
  const template = Buffer.from(RequestType.encode(RequestType.fromObject({ resourceSpans })).finish());
  const offsets: number[] = [];
  for (let at = template.indexOf(marker); at >= 0; at = template.indexOf(marker, at + 1)) offsets.push(at);
  if (offsets.length !== BATCH) throw new Error(`bench body: ${offsets.length} trace ids found`);
  const run = randomBytes(8);
  let n = 0;
  return () => {
    const body = Buffer.from(template);
    const id = Buffer.alloc(16);
    run.copy(id, 0);
    id.writeBigUInt64BE(BigInt(++n), 8);
    for (const at of offsets) id.copy(body, at);
    return body;
  };
}

/**
 * The same calls as /v1/telemetry JSON, each row as OTLP stores it: a trace id per batch and a
 * span id per event, and request_id `<trace_id>:<span_id>`, so both paths write the same bytes
 * and the same indexes and the comparison is of the transports.
 */
function nativeFactory(agentIds: string[]): () => string {
  const at = new Date().toISOString();
  const run = randomBytes(8).toString('hex');
  const events = Array.from({ length: BATCH }, (_, i) => ({
    agent_id: agentIds[i % agentIds.length], timestamp: at, request_id: `@@id@@:${i.toString(16).padStart(16, '0')}`,
    trace_id: '@@id@@', span_id: i.toString(16).padStart(16, '0'), method: isGenAi(i) ? 'POST' : i % 3 === 0 ? 'POST' : 'GET',
    url_host: isGenAi(i) ? 'api.openai.com' : `api${i % 20}.example.com`, url_path: isGenAi(i) ? '/chat' : '/v1/resources/{id}/items',
    status_code: i % 33 === 0 ? 502 : 200, latency_ms: 5 + ((i * 7919) % 400), policy_result: i % 33 === 0 ? 'error' : 'allowed',
    ...(isGenAi(i) ? { gen_ai: { system: 'openai', operation: 'chat', request_model: 'gpt-4o-mini', input_tokens: 800 + i, output_tokens: 120 } } : {}),
  }));
  const pieces = JSON.stringify({ events }).split('@@id@@');
  let n = 0;
  return () => {
    const id = `${run}${(++n).toString(16).padStart(16, '0')}`;
    return pieces.join(id);
  };
}

interface Run {
  perSecond: number;
  p50: number;
  p99: number;
  errors: number;
}

async function hammer(url: string, route: string, headers: Record<string, string>, nextBody: () => string | Buffer, seconds = duration): Promise<Run> {
  const result = await autocannon({
    url, connections, duration: seconds,
    requests: [{ method: 'POST', path: route, headers, setupRequest: (req) => ({ ...req, body: nextBody() }) }],
  });
  return { perSecond: Math.round((result.requests.total * BATCH) / seconds), p50: result.latency.p50, p99: result.latency.p99, errors: result.non2xx + result.errors };
}

/** --connections unary calls in flight for the duration; latencies per call. */
async function hammerGrpc(address: string, apiKey: string, nextBody: () => Buffer, seconds = duration): Promise<Run> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  metadata.set('x-api-key', apiKey);
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  const call = (body: Buffer) => new Promise<void>((resolve) => {
    client.makeUnaryRequest('/opentelemetry.proto.collector.trace.v1.TraceService/Export', (b: Buffer) => b, (b: Buffer) => b, body, metadata, (err) => {
      if (err) errors++;
      resolve();
    });
  });
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < end) {
      const t = performance.now();
      await call(nextBody());
      latencies.push(performance.now() - t);
    }
  }));
  client.close();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Math.round(latencies[Math.max(0, Math.ceil(q * latencies.length) - 1)] ?? 0);
  return { perSecond: Math.round(((latencies.length - errors) * BATCH) / seconds), p50: at(0.5), p99: at(0.99), errors };
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
  for (let i = 0; i < AGENTS; i++) agentIds.push((await call('/v1/agents', { name: `bench agent ${i}` })).id!);
  return { apiKey: key!, agentIds };
}

async function storedEvents(dataDir: string, databaseUrl: string | undefined): Promise<number> {
  const db = createDatabase(databaseUrl ? { databaseUrl } : { sqliteFile: path.join(dataDir, SQLITE_FILE) });
  try {
    const row = await db.kysely.selectFrom('telemetry_events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  } finally {
    await db.close();
  }
}

async function benchStore(store: string, port: number): Promise<Array<Record<string, string | number>>> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'corral-bench-otlp-'));
  const dbName = `corral_bench_otlp_${process.pid}_${port}`;
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
  const ingest = `http://127.0.0.1:${port + 1}`;
  const grpcAddress = `127.0.0.1:${port + 2}`;
  const server = await startProcess('packages/server/src/main.ts', [], {
    PORT: String(port), INGEST_PORT: String(port + 1), OTLP_GRPC_PORT: String(port + 2), HOST: '127.0.0.1', DATA_DIR: dataDir,
    CORRAL_JWT_SECRET: secret, CORRAL_DEFAULT_PLAN: 'enterprise', CORRAL_RATE_LIMIT_ENTERPRISE: '1000000000', LOG_LEVEL: 'warn',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  }, `${base}/healthz`);
  try {
    const { apiKey, agentIds } = await prepareOrg(base);
    const nextNative = nativeFactory(agentIds);
    const nextOtlp = otlpFactory();
    const native = { 'x-api-key': apiKey, 'content-type': 'application/json' };
    const otlp = { 'x-api-key': apiKey, 'content-type': 'application/x-protobuf' };
    // Warm-up of each path (the OTLP one provisions the ten services' agents).
    await hammer(base, '/v1/telemetry', native, nextNative, 3);
    await hammer(ingest, '/v1/traces', otlp, nextOtlp, 3);
    await hammerGrpc(grpcAddress, apiKey, nextOtlp, 3);
    const runs: Array<[string, Run]> = [
      ['/v1/telemetry JSON (native)', await hammer(base, '/v1/telemetry', native, nextNative)],
      ['OTLP/HTTP protobuf', await hammer(ingest, '/v1/traces', otlp, nextOtlp)],
      ['OTLP/gRPC', await hammerGrpc(grpcAddress, apiKey, nextOtlp)],
    ];
    await stopProcess(server);
    const stored = await storedEvents(dataDir, databaseUrl);
    const nativeRate = runs[0]![1].perSecond;
    return runs.map(([path, r], i) => ({
      store, path, 'events or spans/s': r.perSecond, 'vs native': i === 0 ? '1.00×' : `${(r.perSecond / nativeRate).toFixed(2)}×`,
      'request p50 ms': r.p50, 'request p99 ms': r.p99, 'failed': r.errors, 'events stored (store total)': i === 0 ? stored : '',
    }));
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

console.log(`machine: ${machine()}; load average before: ${load()}`);
console.log(`requests of ${BATCH} events or spans, ${connections} connections, ${duration} s per run`);
const rows: Array<Record<string, string | number>> = [];
for (const [i, store] of stores.entries()) rows.push(...(await benchStore(store, 19_400 + i * 10)));
console.log(table(rows));
console.log(`load average after: ${load()}`);
