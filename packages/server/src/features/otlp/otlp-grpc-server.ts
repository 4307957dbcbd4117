import * as grpc from '@grpc/grpc-js';
import { AppError } from '../../errors.js';
import type { Worker } from '../../lib/lifecycle.js';
import type { Logger } from '../../lib/logger.js';
import type { IngestService } from '../telemetry/index.js';
import { decodeProtobuf, encodeResponse, encodeRetryStatus } from './otlp-codec.js';
import type { OtlpService } from './otlp-service.js';

/*
 * OTLP/gRPC: opentelemetry.proto.collector.trace.v1.TraceService/Export on OTLP_GRPC_PORT, a
 * worker of the ingest role. grpc-js undoes gzip (grpc-encoding) itself; messages arrive as
 * bytes and are decoded by the same codec as OTLP/HTTP, then go through the same gate. The API
 * key is the `x-api-key` metadata. Refusals map onto the status codes OTLP specifies; the
 * retryable ones carry google.rpc.RetryInfo in grpc-status-details-bin so exporters back off.
 */

const EXPORT_PATH = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';
const identity = (b: Buffer): Buffer => b;

const traceService: grpc.ServiceDefinition = {
  Export: {
    path: EXPORT_PATH,
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
    originalName: 'export',
  },
};

const statusByHttp: Record<number, grpc.status> = {
  400: grpc.status.INVALID_ARGUMENT,
  401: grpc.status.UNAUTHENTICATED,
  403: grpc.status.PERMISSION_DENIED,
  404: grpc.status.NOT_FOUND,
  409: grpc.status.ABORTED,
  413: grpc.status.INVALID_ARGUMENT,
  429: grpc.status.RESOURCE_EXHAUSTED,
  503: grpc.status.UNAVAILABLE,
};

/** An AppError (or anything else) as the gRPC error the client sees. */
export function toGrpcError(err: unknown, log: Logger): Partial<grpc.StatusObject> {
  if (!(err instanceof AppError)) {
    log.error({ err }, 'OTLP/gRPC export failed');
    return { code: grpc.status.INTERNAL, details: 'Internal error' };
  }
  const code = statusByHttp[err.status] ?? (err.status >= 500 ? grpc.status.INTERNAL : grpc.status.INVALID_ARGUMENT);
  const metadata = new grpc.Metadata();
  const retryAfter = Number(err.headers?.['retry-after'] ?? err.headers?.['Retry-After']);
  if ((code === grpc.status.RESOURCE_EXHAUSTED || code === grpc.status.UNAVAILABLE) && Number.isFinite(retryAfter)) {
    metadata.set('grpc-status-details-bin', encodeRetryStatus(code, err.message, retryAfter));
  }
  return { code, details: err.message, metadata };
}

interface Deps {
  otlpService: Pick<OtlpService, 'export'>;
  ingestService: Pick<IngestService, 'authenticate'>;
  log: Logger;
  host: string;
  /** 0 picks a free port (tests); the configuration turns the server off instead of passing 0. */
  port: number;
  maxMessageBytes: number;
}

export interface OtlpGrpcServer extends Worker {
  /** host:port once started. */
  address(): string | undefined;
}

export function createOtlpGrpcServer({ otlpService, ingestService, log, host, port, maxMessageBytes }: Deps): OtlpGrpcServer {
  let server: grpc.Server | undefined;
  let bound: string | undefined;

  const exportHandler: grpc.handleUnaryCall<Buffer, Buffer> = (call, callback) => {
    const key = call.metadata.get('x-api-key')[0];
    void (async () => {
      const principal = await ingestService.authenticate(typeof key === 'string' ? key : key?.toString('utf8'));
      const outcome = await otlpService.export(principal, decodeProtobuf(call.request));
      return Buffer.from(encodeResponse(outcome.partial));
    })().then((response) => callback(null, response), (err: unknown) => callback(toGrpcError(err, log)));
  };

  return {
    name: 'otlp-grpc',
    kind: 'listener',
    async start() {
      const s = new grpc.Server({ 'grpc.max_receive_message_length': maxMessageBytes });
      s.addService(traceService, { Export: exportHandler });
      const name = host.includes(':') ? `[${host}]` : host;
      const actual = await new Promise<number>((resolve, reject) => {
        s.bindAsync(`${name}:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err
          ? reject(new Error(`OTLP_GRPC_PORT: cannot listen on ${name}:${port} (${err.message}); set OTLP_GRPC_PORT to a free port, or 0 to turn OTLP/gRPC off`))
          : resolve(p)));
      });
      server = s;
      bound = `${name}:${actual}`;
    },
    async stop() {
      const s = server;
      server = undefined;
      if (!s) return;
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => s.forceShutdown(), 10_000);
        s.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
    },
    address: () => bound,
  };
}
