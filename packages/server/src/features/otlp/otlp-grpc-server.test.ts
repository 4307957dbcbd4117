import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../../../test/helpers/build-test-app.js';
import { decodeExportResponse, exportCall, httpSpan, otlpProtobuf } from '../../../test/helpers/otlp-fixtures.js';
import { newTelemetryOrg } from '../../../test/helpers/telemetry-fixtures.js';
import { testDialects } from '../../../test/helpers/test-databases.js';
import { decodeRetryStatus } from './otlp-codec.js';

describe.each(testDialects)('OTLP/gRPC TraceService/Export on %s', (dialect) => {
  let ctx: TestContext;
  let address: string;
  beforeAll(async () => {
    ctx = await buildTestContext(dialect, { container: { otlpGrpc: { host: '127.0.0.1', port: 0 }, rateLimits: { free: 4, team: 4, enterprise: 4 } } });
    await ctx.container.otlpGrpc?.start();
    address = ctx.container.otlpGrpc?.address() ?? '';
  });
  afterAll(() => ctx.close());

  const stored = async (token: string) =>
    (await ctx.request({ method: 'GET', url: '/v1/dashboard/events?limit=100', token })).json<{ data: Array<{ span_id: string }> }>().data;

  it('stores spans sent plain and gzip-compressed, once each', async () => {
    const org = await newTelemetryOrg(ctx);
    const span = httpSpan({ start: ctx.clock.now() - 1000 });
    const body = otlpProtobuf([{ service: 'grpc-agent', spans: [span] }]);
    const plain = await exportCall(address, body, org.apiKey, false);
    expect(plain.error).toBeUndefined();
    expect(decodeExportResponse(plain.response ?? Buffer.alloc(0))).toEqual({});
    const zipped = await exportCall(address, otlpProtobuf([{ service: 'grpc-agent', spans: [httpSpan({ start: ctx.clock.now() - 1000 })] }]), org.apiKey, true);
    expect(zipped.error).toBeUndefined();
    expect((await exportCall(address, body, org.apiKey, true)).error).toBeUndefined();
    expect(await stored(org.token)).toHaveLength(2);
  });

  it('answers UNAUTHENTICATED without a key and PERMISSION_DENIED for a read-only key', async () => {
    const org = await newTelemetryOrg(ctx);
    const body = otlpProtobuf([{ service: 'grpc-auth', spans: [httpSpan()] }]);
    expect((await exportCall(address, body, undefined, false)).error?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect((await exportCall(address, body, 'crl_live_not-a-real-key', false)).error?.code).toBe(grpc.status.UNAUTHENTICATED);
    const readOnly = await ctx.createKey(org.token, { kind: 'read_only' });
    expect((await exportCall(address, body, readOnly.key, false)).error?.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(await stored(org.token)).toEqual([]);
  });

  it('answers RESOURCE_EXHAUSTED with RetryInfo past the rate limit, storing nothing of that request', async () => {
    const org = await newTelemetryOrg(ctx);
    const now = ctx.clock.now() - 1000;
    const five = otlpProtobuf([{ service: 'grpc-busy', spans: [1, 2, 3, 4, 5].map(() => httpSpan({ start: now })) }]);
    const answer = await exportCall(address, five, org.apiKey, false);
    expect(answer.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    const details = answer.error?.metadata.get('grpc-status-details-bin')[0];
    expect(Buffer.isBuffer(details)).toBe(true);
    const status = decodeRetryStatus(details as Buffer);
    expect(status.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(status.retryDelaySeconds).toBeGreaterThan(0);
    expect(await stored(org.token)).toEqual([]);
  });

  it('answers INVALID_ARGUMENT for bytes that are not a request', async () => {
    const org = await newTelemetryOrg(ctx);
    const good = otlpProtobuf([{ service: 'grpc-bad', spans: [httpSpan()] }]);
    expect((await exportCall(address, good.subarray(0, good.length - 5), org.apiKey, false)).error?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(await stored(org.token)).toEqual([]);
  });
});
