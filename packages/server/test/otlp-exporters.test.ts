import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as HttpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SimpleSpanProcessor, TracerProvider, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace';
import * as grpc from '@grpc/grpc-js';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signJwt } from '../src/features/auth/index.js';
import { TEST_JWT_SECRET } from './helpers/build-test-app.js';
import { httpCall, type ServerProcess, startServerProcess } from './helpers/server-process.js';
import { pgUrl, testDialects } from './helpers/test-databases.js';

/*
 * The official OpenTelemetry JS exporters (OTLP/HTTP protobuf, OTLP/HTTP JSON, OTLP/gRPC), gzip
 * on and off, against the service running as a process; then the agents, events, gen_ai fields
 * and the models endpoint that resulted, read over its API.
 */

const SLOW = { timeout: 120_000 };

/** A port free right now, for OTLP_GRPC_PORT (0 there means off). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Wraps an exporter and keeps each export's result code (0 is success). */
function recording(inner: SpanExporter, results: number[]): SpanExporter {
  return {
    export: (spans: ReadableSpan[], done) => inner.export(spans, (r) => {
      results.push(r.code);
      done(r);
    }),
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}

type Variant = 'proto' | 'json' | 'grpc';
const variants: Array<[Variant, boolean]> = [['proto', false], ['proto', true], ['json', false], ['json', true], ['grpc', false], ['grpc', true]];

describe.each(testDialects)('official OpenTelemetry exporters against the running service on %s', (dialect) => {
  let server: ServerProcess;
  let dataDir: string;
  const schema = `otlp_${randomBytes(5).toString('hex')}`;
  const orgId = randomUUID();
  let token: string;
  let apiKey: string;

  const api = async <T>(url: string, opts: { method?: string; body?: unknown } = {}): Promise<T> => {
    const res = await httpCall(`${server.api}${url}`, {
      method: opts.method ?? 'GET',
      headers: { authorization: `Bearer ${token}`, ...(opts.body ? { 'content-type': 'application/json' } : {}) },
      ...(opts.body ? { body: JSON.stringify(opts.body) } : {}),
    });
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${res.body}`);
    return JSON.parse(res.body) as T;
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'corral-otlp-'));
    const env: Record<string, string> = {
      DATA_DIR: dataDir, CORRAL_JWT_SECRET: TEST_JWT_SECRET, CORRAL_DEFAULT_PLAN: 'team', OTLP_GRPC_PORT: String(await freePort()),
    };
    if (dialect === 'postgres') {
      const admin = new pg.Client({ connectionString: pgUrl ?? '' });
      await admin.connect();
      await admin.query(`CREATE SCHEMA ${schema}`);
      await admin.end();
      const url = new URL(pgUrl ?? '');
      url.searchParams.set('options', `-c search_path=${schema}`);
      env.DATABASE_URL = url.toString();
    }
    server = await startServerProcess(env);
    token = await signJwt(TEST_JWT_SECRET, { orgId, role: 'owner', subject: 'otlp-test' }, 3600);
    apiKey = (await api<{ key: string }>('/v1/keys', { method: 'POST', body: { name: 'otlp', scope: { kind: 'all' } } })).key;
  }, SLOW.timeout);

  afterAll(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    if (dialect === 'postgres') {
      const admin = new pg.Client({ connectionString: pgUrl ?? '' });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    }
  });

  function exporterFor(variant: Variant, gzip: boolean): SpanExporter {
    const compression = gzip ? 'gzip' : 'none';
    if (variant === 'grpc') {
      const metadata = new grpc.Metadata();
      metadata.set('x-api-key', apiKey);
      return new GrpcExporter({ url: `http://${server.otlpGrpc ?? ''}`, metadata, compression } as ConstructorParameters<typeof GrpcExporter>[0]);
    }
    const options = { url: `${server.ingest}/v1/traces`, headers: { 'x-api-key': apiKey }, compression } as const;
    return variant === 'proto'
      ? new ProtoExporter(options as ConstructorParameters<typeof ProtoExporter>[0])
      : new HttpJsonExporter(options as ConstructorParameters<typeof HttpJsonExporter>[0]);
  }

  it('stores the spans of every exporter, gzip on and off, with agents, gen_ai fields and model usage', SLOW, async () => {
    expect(server.otlpGrpc).toMatch(/^127\.0\.0\.1:\d+$/);
    const results: number[] = [];
    const sent: Array<{ service: string; traceId: string }> = [];
    for (const [variant, gzip] of variants) {
      const service = `svc-${variant}-${gzip ? 'gzip' : 'plain'}`;
      const provider = new TracerProvider({
        resource: resourceFromAttributes({ 'service.name': service }),
        spanProcessors: [new SimpleSpanProcessor({ exporter: recording(exporterFor(variant, gzip), results) })],
      });
      const tracer = provider.getTracer('otlp-test');
      const http = tracer.startSpan('GET', { kind: SpanKind.CLIENT, attributes: {
        'http.request.method': 'GET', 'url.full': 'https://api.example.com/v1/users/42', 'server.address': 'api.example.com', 'http.response.status_code': 200,
      } });
      http.end();
      const llm = tracer.startSpan('chat', { kind: SpanKind.CLIENT, attributes: {
        'gen_ai.provider.name': 'openai', 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.usage.input_tokens': 1000, 'gen_ai.usage.output_tokens': 100, 'gen_ai.usage.cache_read.input_tokens': 400,
      } });
      llm.setStatus({ code: SpanStatusCode.OK });
      llm.end();
      tracer.startSpan('internal work').end();
      await provider.forceFlush();
      await provider.shutdown();
      sent.push({ service, traceId: http.spanContext().traceId });
    }
    expect(results).toEqual(Array.from({ length: variants.length * 3 }, () => 0));

    const agents = (await api<{ data: Array<{ id: string; name: string }> }>('/v1/agents?limit=100')).data;
    expect(agents.map((a) => a.name).sort()).toEqual(sent.map((s) => s.service).sort());

    const events = (await api<{ data: Array<Record<string, unknown>> }>('/v1/dashboard/events?limit=100')).data;
    expect(events).toHaveLength(variants.length * 2);
    for (const { service, traceId } of sent) {
      const agentId = agents.find((a) => a.name === service)?.id;
      const mine = events.filter((e) => e.agent_id === agentId);
      expect(mine).toEqual(expect.arrayContaining([
        expect.objectContaining({ method: 'GET', url_host: 'api.example.com', url_path: '/v1/users/{id}', status_code: 200, trace_id: traceId }),
        expect.objectContaining({
          method: 'POST', url_host: 'openai', url_path: '/chat',
          gen_ai: { system: 'openai', operation: 'chat', request_model: 'gpt-4o-mini', input_tokens: 1000, output_tokens: 100, cached_input_tokens: 400 },
        }),
      ]));
    }

    const models = await api<unknown[]>('/v1/dashboard/models');
    const n = variants.length;
    expect(models).toEqual([{
      provider: 'openai', model: 'gpt-4o-mini', calls: n, input_tokens: 1000 * n, output_tokens: 100 * n, cached_input_tokens: 400 * n,
      reasoning_tokens: 0, cost_usd: expect.closeTo(((600 * 0.15 + 400 * 0.075 + 100 * 0.6) / 1e6) * n, 9) as unknown,
    }]);
  });
});
