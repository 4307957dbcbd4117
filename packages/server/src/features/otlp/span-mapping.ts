import type { EventRow } from '../telemetry/index.js';
import type { AnyValue, KeyValue, Span } from './otlp-codec.js';
import { toNumber } from './otlp-codec.js';
import { extractGenAi, isGenAiKey } from './gen-ai-dialects.js';
import { templatePath } from './path-template.js';

/*
 * One span → one telemetry event, or nothing (docs/otlp.md has the same table):
 * - a CLIENT span with an HTTP method (current or older conventions) is an outbound call;
 * - any span carrying GenAI attributes is a model call, HTTP attributes or not;
 * - every other span (server spans, internal work, database calls) is accepted and skipped.
 * Each HTTP field is read from the first attribute of its row that the span carries.
 */

export const HTTP_ATTRIBUTES = {
  method: ['http.request.method', 'http.method'],
  url: ['url.full', 'http.url'],
  host: ['server.address', 'net.peer.name', 'http.host'],
  path: ['url.path', 'http.target'],
  status: ['http.response.status_code', 'http.status_code'],
} as const;

/** Policy decisions an instrumented agent records on its span. */
export const POLICY_RESULT_ATTRIBUTE = 'corral.policy.result';
export const POLICY_RULE_ATTRIBUTE = 'corral.policy.rule';

export const SPAN_KIND_CLIENT = 3;
const STATUS_CODE_ERROR = 2;
const MAX_LATENCY_MS = 86_400_000;
const NS_PER_MS = 1_000_000;
/** More than a double's error on a nanosecond timestamp (256 ns spacing), far less than a millisecond. */
const NS_ROUNDING_MS = 0.001;

/**
 * What the mapping gives the service: the stored row, with org_id, agent_id and received_at
 * left blank for the service to fill in place (same shape throughout: no copy per span, and
 * V8 keeps one hidden class for every row, as the /v1/telemetry path does).
 */
export type MappedSpan = EventRow & { policy_result: 'allowed' | 'denied' | 'error'; trace_id: string; span_id: string };

/** An attribute value as a plain value: strings, numbers, booleans; arrays and maps are not read. */
export function plainValue(v: AnyValue | null | undefined): unknown {
  if (!v) return undefined;
  if (Object.hasOwn(v, 'stringValue')) return v.stringValue;
  if (Object.hasOwn(v, 'intValue')) return toNumber(v.intValue);
  if (Object.hasOwn(v, 'doubleValue')) return v.doubleValue;
  if (Object.hasOwn(v, 'boolValue')) return v.boolValue;
  return undefined;
}

export function attributeMap(attributes: readonly KeyValue[] | undefined): Map<string, unknown> {
  const map = new Map<string, unknown>();
  if (attributes) for (const kv of attributes) map.set(kv.key, plainValue(kv.value));
  return map;
}

function first(attrs: ReadonlyMap<string, unknown>, keys: readonly string[]): unknown {
  for (const key of keys) {
    const v = attrs.get(key);
    if (v !== undefined && v !== '') return v;
  }
  return undefined;
}

const clean = (s: string, max: number): string => s.replaceAll('\u0000', '').slice(0, max);
const asString = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined);
const asStatus = (v: unknown): number | null => {
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 599 ? n : null;
};

/**
 * Host and path of an absolute URL. A pattern rather than `new URL()`: it runs for every span and
 * needs only these two parts (userinfo and port dropped, query and fragment cut).
 */
const URL_PARTS = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(\[[^\]/?#]*\]|[^:/?#]*)(?::\d*)?([^?#]*)/;
function parseUrl(raw: string | undefined): { hostname: string; pathname: string } | undefined {
  const m = raw === undefined ? null : URL_PARTS.exec(raw);
  if (!m?.[1]) return undefined;
  return { hostname: m[1], pathname: m[2] || '/' };
}

function hex(bytes: Uint8Array): string {
  return (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).toString('hex');
}

/** corral.policy.result when it is a known result; else the span status (error) or allowed. */
function policyOf(span: Span, attrs: ReadonlyMap<string, unknown>): MappedSpan['policy_result'] {
  const given = attrs.get(POLICY_RESULT_ATTRIBUTE);
  if (given === 'allowed' || given === 'denied' || given === 'error') return given;
  return span.status?.code === STATUS_CODE_ERROR ? 'error' : 'allowed';
}

export type MapOutcome = { kind: 'event'; event: MappedSpan } | { kind: 'skipped' } | { kind: 'invalid'; reason: string };

/** Maps one span; a span without a 16-byte trace id and 8-byte span id cannot be stored once, so it is refused. */
export function mapSpan(span: Span): MapOutcome {
  const attrs = attributeMap(span.attributes);
  const method = asString(first(attrs, HTTP_ATTRIBUTES.method));
  const isHttp = span.kind === SPAN_KIND_CLIENT && method !== undefined && /^[A-Za-z]{1,16}$/.test(method);
  let isGenAi = false;
  for (const key of attrs.keys()) {
    if (isGenAiKey(key)) {
      isGenAi = true;
      break;
    }
  }
  if (!isHttp && !isGenAi) return { kind: 'skipped' };
  if (span.traceId.length !== 16 || span.spanId.length !== 8) return { kind: 'invalid', reason: 'a span needs a 16-byte trace_id and an 8-byte span_id' };

  const genAi = isGenAi ? extractGenAi(attrs) : null;
  const url = parseUrl(asString(first(attrs, HTTP_ATTRIBUTES.url)));
  const host = asString(first(attrs, HTTP_ATTRIBUTES.host)) ?? url?.hostname ?? genAi?.system ?? 'unknown';
  const rawPath = url?.pathname ?? asString(first(attrs, HTTP_ATTRIBUTES.path))?.split('?')[0];
  const path = rawPath ?? (genAi?.operation ? `/${genAi.operation}` : '/');
  const start = toNumber(span.startTimeUnixNano);
  const end = toNumber(span.endTimeUnixNano);
  const policy = policyOf(span, attrs);
  const denied = policy === 'denied';
  const traceId = hex(span.traceId);
  const spanId = hex(span.spanId);
  const rule = asString(attrs.get(POLICY_RULE_ATTRIBUTE));
  return {
    kind: 'event',
    event: {
      org_id: '',
      // Nanoseconds since 1970 exceed 2^53: the decoded double is off by up to 128 ns, so a time
      // on an exact millisecond may read a hair below it. Allow for that before truncating.
      ts: Math.floor(start / NS_PER_MS + NS_ROUNDING_MS),
      request_id: `${traceId}:${spanId}`,
      agent_id: '',
      // A GenAI span without HTTP attributes was still an API call, and those are POSTs.
      method: isHttp && method ? method.toUpperCase() : 'POST',
      url_host: clean(host.toLowerCase(), 260) || 'unknown',
      url_path: clean(templatePath(path.startsWith('/') ? path : `/${path}`), 2048),
      status_code: denied ? null : asStatus(first(attrs, HTTP_ATTRIBUTES.status)),
      latency_ms: denied ? null : Math.min(MAX_LATENCY_MS, Math.max(0, Math.round((end - start) / NS_PER_MS))),
      policy_result: policy,
      deny_reason: rule ? clean(rule, 200) || null : null,
      trace_id: traceId,
      span_id: spanId,
      gen_ai: genAi === null ? null : JSON.stringify(genAi),
      received_at: 0,
    },
  };
}

/** `service.name` of a resource, or undefined when it is missing or empty. */
export function serviceNameOf(attributes: readonly KeyValue[] | undefined): string | undefined {
  const v = attributeMap(attributes).get('service.name');
  return typeof v === 'string' && v.trim().length > 0 ? clean(v.trim(), 200) : undefined;
}
