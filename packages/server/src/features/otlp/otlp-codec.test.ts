import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { decodeJson, decodeProtobuf, decodeRetryStatus, encodeRetryStatus, type ExportTraceRequest, toNumber } from './otlp-codec.js';
import { mapSpan } from './span-mapping.js';

// Bodies the official OpenTelemetry JS exporters sent (test/fixtures/otlp/capture.ts wrote them).
const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/otlp');

function summarize(request: ExportTraceRequest) {
  const spans = request.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
  return {
    service: request.resourceSpans[0]?.resource?.attributes.find((a) => a.key === 'service.name')?.value?.stringValue,
    outcomes: spans.map((s) => {
      const m = mapSpan(s);
      return m.kind === 'event'
        ? { name: s.name, ...m.event, trace_id: m.event.trace_id.length, span_id: m.event.span_id.length, request_id: undefined, gen_ai: m.event.gen_ai === null ? null : JSON.parse(m.event.gen_ai) as unknown }
        : { name: s.name, kind: m.kind };
    }),
  };
}

const expected = {
  service: 'fixture-agent',
  outcomes: expect.arrayContaining([
    expect.objectContaining({
      name: 'GET', ts: Date.parse('2026-01-01T00:00:00Z'), method: 'GET', url_host: 'api.example.com', url_path: '/v1/users/{id}', status_code: 200,
      latency_ms: 42, policy_result: 'allowed', trace_id: 32, span_id: 16,
    }),
    expect.objectContaining({
      name: 'chat gpt-4o', method: 'POST', url_host: 'api.openai.com', policy_result: 'error', latency_ms: 800,
      gen_ai: { system: 'openai', operation: 'chat', request_model: 'gpt-4o', response_model: 'gpt-4o-2024-08-06', input_tokens: 1200, output_tokens: 300 },
    }),
    { name: 'compute', kind: 'skipped' },
  ]) as unknown,
};

describe('OTLP codec', () => {
  it('decodes the protobuf body captured from @opentelemetry/exporter-trace-otlp-proto', () => {
    const request = decodeProtobuf(readFileSync(path.join(fixtures, 'exporter-proto.bin')));
    expect(summarize(request)).toEqual(expected);
    expect(summarize(request).outcomes).toHaveLength(3);
  });

  it('decodes the JSON body captured from @opentelemetry/exporter-trace-otlp-http', () => {
    const request = decodeJson(JSON.parse(readFileSync(path.join(fixtures, 'exporter-http.json'), 'utf8')));
    expect(summarize(request)).toEqual(expected);
  });

  it('reads int64 as numbers or strings and enums as numbers or names', () => {
    const span = { traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8), kind: 'SPAN_KIND_CLIENT', startTimeUnixNano: 1_700_000_000_000_000, endTimeUnixNano: '1700000000500000000', status: { code: 'STATUS_CODE_ERROR' } };
    const request = decodeJson({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] });
    const decoded = request.resourceSpans[0]?.scopeSpans[0]?.spans[0];
    expect(decoded?.kind).toBe(3);
    expect(decoded?.status?.code).toBe(2);
    expect(toNumber(decoded?.startTimeUnixNano)).toBe(1_700_000_000_000_000);
    expect(toNumber(decoded?.endTimeUnixNano)).toBe(1_700_000_000_500_000_000);
  });

  it('refuses bytes that are not a request', () => {
    expect(() => decodeProtobuf(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f]))).toThrow(/not an OTLP ExportTraceServiceRequest/);
  });

  it('round-trips a google.rpc.Status with RetryInfo', () => {
    expect(decodeRetryStatus(encodeRetryStatus(8, 'slow down', 7.2))).toEqual({ code: 8, message: 'slow down', retryDelaySeconds: 8 });
  });
});
