import protobuf from 'protobufjs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ValidationError } from '../../errors.js';

/*
 * OTLP trace messages, decoded by protobufjs against the official .proto files vendored in
 * packages/server/proto (see its README for the version). Protobuf bodies decode directly; OTLP
 * JSON is checked field by field against the same definitions first (the OTLP JSON mapping:
 * lowerCamelCase keys, trace and span ids in hex, 64-bit integers as strings or numbers, enums
 * as integers or names), because protobufjs' fromObject coerces wrong types silently.
 */

// 64-bit fields (span times in nanoseconds) decode as plain numbers, not Long objects: two
// allocations less per span. A current time in ns is near 2^61, where doubles lie 256 ns apart:
// far finer than the milliseconds stored.
protobuf.util.Long = undefined as unknown as typeof protobuf.util.Long;
protobuf.configure();

// The same depth from src/features/otlp and dist/features/otlp.
const protoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../proto');

const root = new protobuf.Root();
root.resolvePath = (_origin, target) => path.join(protoDir, target);
root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto');
root.resolveAll();

const RequestType = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
const ResponseType = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse');

/** google.rpc.Status and RetryInfo, for gRPC error details (not in the OTLP files; field numbers from google/rpc). */
const rpcRoot = protobuf.Root.fromJSON({
  nested: {
    google: {
      nested: {
        protobuf: {
          nested: {
            Any: { fields: { type_url: { type: 'string', id: 1 }, value: { type: 'bytes', id: 2 } } },
            Duration: { fields: { seconds: { type: 'int64', id: 1 }, nanos: { type: 'int32', id: 2 } } },
          },
        },
        rpc: {
          nested: {
            Status: { fields: { code: { type: 'int32', id: 1 }, message: { type: 'string', id: 2 }, details: { rule: 'repeated', type: 'google.protobuf.Any', id: 3 } } },
            RetryInfo: { fields: { retry_delay: { type: 'google.protobuf.Duration', id: 1 } } },
          },
        },
      },
    },
  },
});
const StatusType = rpcRoot.lookupType('google.rpc.Status');
const RetryInfoType = rpcRoot.lookupType('google.rpc.RetryInfo');

/** A 64-bit integer as protobufjs hands it over: a number, or a Long when it does not fit. */
export type Int64 = number | { toNumber(): number };

export interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: Int64;
  doubleValue?: number;
  arrayValue?: { values: AnyValue[] };
  kvlistValue?: { values: KeyValue[] };
  bytesValue?: Uint8Array;
}
export interface KeyValue {
  key: string;
  value?: AnyValue | null;
}
export interface Span {
  traceId: Uint8Array;
  spanId: Uint8Array;
  name: string;
  kind: number;
  startTimeUnixNano: Int64;
  endTimeUnixNano: Int64;
  attributes: KeyValue[];
  status?: { code: number; message: string } | null;
}
export interface ResourceSpans {
  resource?: { attributes: KeyValue[] } | null;
  scopeSpans: Array<{ spans: Span[] }>;
}
export interface ExportTraceRequest {
  resourceSpans: ResourceSpans[];
}

export const toNumber = (v: Int64 | undefined | null): number => (v === undefined || v === null ? 0 : typeof v === 'number' ? v : v.toNumber());

/** Protobuf bytes → request; anything protobufjs cannot read is a 400. */
export function decodeProtobuf(body: Uint8Array): ExportTraceRequest {
  try {
    return RequestType.decode(body) as unknown as ExportTraceRequest;
  } catch (err) {
    throw new ValidationError(`Body is not an OTLP ExportTraceServiceRequest: ${(err as Error).message}`);
  }
}

/** A parsed OTLP JSON body → request; a field of the wrong type is a 400 naming it. */
export function decodeJson(body: unknown): ExportTraceRequest {
  const normalized = normalizeMessage(RequestType, body, '');
  return RequestType.fromObject(normalized) as unknown as ExportTraceRequest;
}

export interface PartialSuccess {
  rejectedSpans: number;
  errorMessage: string;
}

/** ExportTraceServiceResponse; partial_success only when a span was refused (OTLP: empty otherwise). */
export function encodeResponse(partial: PartialSuccess | undefined): Uint8Array {
  return ResponseType.encode(ResponseType.create(partial && partial.rejectedSpans > 0 ? { partialSuccess: partial } : {})).finish();
}

/** The same response in OTLP JSON (int64 as a string). */
export function responseJson(partial: PartialSuccess | undefined): Record<string, unknown> {
  return partial && partial.rejectedSpans > 0
    ? { partialSuccess: { rejectedSpans: String(partial.rejectedSpans), errorMessage: partial.errorMessage } }
    : {};
}

/** google.rpc.Status carrying a RetryInfo: the grpc-status-details-bin trailer OTLP/gRPC clients read to back off. */
export function encodeRetryStatus(code: number, message: string, retryAfterSeconds: number): Buffer {
  const retry = RetryInfoType.encode(RetryInfoType.create({ retry_delay: { seconds: Math.max(0, Math.ceil(retryAfterSeconds)), nanos: 0 } })).finish();
  const status = StatusType.create({ code, message, details: [{ type_url: 'type.googleapis.com/google.rpc.RetryInfo', value: retry }] });
  return Buffer.from(StatusType.encode(status).finish());
}

/** For tests and clients of this module: reads the trailer back. */
export function decodeRetryStatus(bytes: Uint8Array): { code: number; message: string; retryDelaySeconds: number | undefined } {
  const status = StatusType.toObject(StatusType.decode(bytes), { longs: Number }) as { code?: number; message?: string; details?: Array<{ type_url: string; value: Uint8Array }> };
  const detail = status.details?.find((d) => d.type_url.endsWith('google.rpc.RetryInfo'));
  const retry = detail ? (RetryInfoType.toObject(RetryInfoType.decode(detail.value), { longs: Number }) as { retry_delay?: { seconds?: number } }) : undefined;
  return { code: status.code ?? 0, message: status.message ?? '', retryDelaySeconds: retry?.retry_delay?.seconds };
}

// ---- OTLP JSON → the object form protobufjs' fromObject reads, checking every type on the way.

/** Fields that OTLP JSON spells in hex instead of base64 (OTLP specification, JSON encoding). */
const HEX_ID_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId']);
const INT64 = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const INT32 = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32']);
const MAX_ERRORS_SHOWN = 1;

function wrong(at: string, expected: string): never {
  throw new ValidationError(`Invalid OTLP JSON: ${at || 'body'} must be ${expected}`, [{ field: at || 'body', message: `must be ${expected}` }].slice(0, MAX_ERRORS_SHOWN));
}

function normalizeMessage(type: protobuf.Type, value: unknown, at: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) wrong(at, 'an object');
  const input = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const field of type.fieldsArray) {
    const v = input[field.name];
    if (v === undefined || v === null) continue; // unknown keys are ignored, as OTLP/JSON receivers must
    const fieldAt = at ? `${at}.${field.name}` : field.name;
    if (field.repeated) {
      if (!Array.isArray(v)) wrong(fieldAt, 'an array');
      out[field.name] = v.map((item, i) => normalizeValue(field, item, `${fieldAt}.${i}`));
    } else {
      out[field.name] = normalizeValue(field, v, fieldAt);
    }
  }
  return out;
}

function normalizeValue(field: protobuf.Field, v: unknown, at: string): unknown {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) return normalizeMessage(resolved, v, at);
  if (resolved instanceof protobuf.Enum) {
    if (typeof v === 'number' && Number.isInteger(v)) return v;
    if (typeof v === 'string' && resolved.values[v] !== undefined) return v;
    return wrong(at, `one of ${Object.keys(resolved.values).join(', ')} or its number`);
  }
  const t = field.type;
  if (t === 'string') return typeof v === 'string' ? v : wrong(at, 'a string');
  if (t === 'bool') return typeof v === 'boolean' ? v : wrong(at, 'a boolean');
  if (t === 'double' || t === 'float') {
    if (typeof v === 'number' || v === 'NaN' || v === 'Infinity' || v === '-Infinity') return v;
    return wrong(at, 'a number');
  }
  if (INT64.has(t)) {
    if ((typeof v === 'number' && Number.isInteger(v)) || (typeof v === 'string' && /^-?\d{1,20}$/.test(v))) return v;
    return wrong(at, 'an integer (number or decimal string)');
  }
  if (INT32.has(t)) {
    if (typeof v === 'number' && Number.isInteger(v)) return v;
    if (typeof v === 'string' && /^-?\d{1,10}$/.test(v)) return Number(v);
    return wrong(at, 'an integer');
  }
  if (t === 'bytes') {
    if (typeof v !== 'string') return wrong(at, 'a string');
    if (HEX_ID_FIELDS.has(field.name)) {
      if (!/^(?:[0-9a-fA-F]{2})*$/.test(v)) return wrong(at, 'a hex string');
      return Buffer.from(v, 'hex').toString('base64');
    }
    if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(v)) return wrong(at, 'a base64 string');
    return v;
  }
  return wrong(at, `a ${t}`);
}
