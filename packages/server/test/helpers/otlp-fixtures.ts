import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { TestContext } from './build-test-app.js';

/*
 * OTLP request bodies for tests, encoded by protobufjs straight from the vendored .proto files
 * (not through the service's codec, so a codec bug cannot hide itself).
 */

const protoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../proto');
const root = new protobuf.Root();
root.resolvePath = (_origin, target) => path.join(protoDir, target);
root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto');
const RequestType = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
const ResponseType = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse');

export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;

export interface SpanSpec {
  name?: string;
  kind?: number;
  attributes?: Record<string, string | number | boolean>;
  /** Epoch ms; now by default. */
  start?: number;
  durationMs?: number;
  /** OTLP status code: 2 is error. */
  status?: number;
  traceId?: string;
  spanId?: string;
}

export const newTraceId = () => randomBytes(16).toString('hex');
export const newSpanId = () => randomBytes(8).toString('hex');

export function httpSpan(overrides: SpanSpec = {}): SpanSpec {
  return {
    kind: SPAN_KIND.client,
    attributes: { 'http.request.method': 'GET', 'url.full': 'https://api.example.com/v1/items/42', 'server.address': 'api.example.com', 'http.response.status_code': 200 },
    ...overrides,
  };
}

function attributes(attrs: SpanSpec['attributes'] = {}) {
  return Object.entries(attrs).map(([key, v]) => ({
    key,
    value: typeof v === 'string' ? { stringValue: v } : typeof v === 'boolean' ? { boolValue: v } : Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v },
  }));
}

/** The OTLP JSON form: hex ids, int64 as strings. Spans get fresh ids unless given; the ids used are written back. */
export function otlpJson(resources: Array<{ service?: string | undefined; spans: SpanSpec[] }>): Record<string, unknown> {
  return {
    resourceSpans: resources.map((r) => ({
      resource: { attributes: r.service === undefined ? [] : attributes({ 'service.name': r.service }) },
      scopeSpans: [{
        scope: { name: 'test' },
        spans: r.spans.map((s) => {
          s.traceId ??= newTraceId();
          s.spanId ??= newSpanId();
          const start = s.start ?? Date.now();
          return {
            traceId: s.traceId, spanId: s.spanId, name: s.name ?? 'span', kind: s.kind ?? SPAN_KIND.internal,
            startTimeUnixNano: `${start}000000`, endTimeUnixNano: `${start + (s.durationMs ?? 25)}000000`,
            attributes: attributes(s.attributes), status: { code: s.status ?? 0 },
          };
        }),
      }],
    })),
  };
}

/** The same request as protobuf bytes. */
export function otlpProtobuf(resources: Array<{ service?: string | undefined; spans: SpanSpec[] }>): Buffer {
  const json = otlpJson(resources) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<Record<string, unknown>> }> }> };
  for (const rs of json.resourceSpans) {
    for (const ss of rs.scopeSpans) {
      for (const s of ss.spans) {
        s.traceId = Buffer.from(s.traceId as string, 'hex');
        s.spanId = Buffer.from(s.spanId as string, 'hex');
      }
    }
  }
  return Buffer.from(RequestType.encode(RequestType.fromObject(json)).finish());
}

export function decodeExportResponse(bytes: Buffer): { partialSuccess?: { rejectedSpans: number; errorMessage: string } } {
  return ResponseType.toObject(ResponseType.decode(bytes), { longs: Number });
}

export function postTraces(
  ctx: TestContext,
  apiKey: string | undefined,
  body: Buffer | string,
  opts: { contentType?: string; gzip?: boolean; headers?: Record<string, string> } = {},
) {
  const payload = opts.gzip ? gzipSync(body) : body;
  return ctx.request({
    method: 'POST', url: '/v1/traces', host: 'ingest', ...(apiKey ? { apiKey } : {}), payload,
    headers: {
      'content-type': opts.contentType ?? (typeof body === 'string' ? 'application/json' : 'application/x-protobuf'),
      ...(opts.gzip ? { 'content-encoding': 'gzip' } : {}),
      ...opts.headers,
    },
  });
}

/** A raw grpc-js client of TraceService/Export: bytes in, bytes or the error with its trailers out. */
export function exportCall(address: string, body: Buffer, apiKey: string | undefined, gzip: boolean): Promise<{ response?: Buffer; error?: grpc.ServiceError }> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure(), gzip ? { 'grpc.default_compression_algorithm': 2 } : {});
  const metadata = new grpc.Metadata();
  if (apiKey) metadata.set('x-api-key', apiKey);
  return new Promise((resolve) => {
    client.makeUnaryRequest<Buffer, Buffer>(
      '/opentelemetry.proto.collector.trace.v1.TraceService/Export', (b) => b, (b) => b, body, metadata,
      (error, response) => {
        client.close();
        resolve(error ? { error } : { response: response ?? Buffer.alloc(0) });
      },
    );
  });
}
