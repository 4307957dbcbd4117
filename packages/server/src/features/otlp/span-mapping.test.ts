import { describe, expect, it } from 'vitest';
import type { KeyValue, Span } from './otlp-codec.js';
import { HTTP_ATTRIBUTES, mapSpan, type MappedSpan, SPAN_KIND_CLIENT } from './span-mapping.js';
import { templatePath } from './path-template.js';

const kv = (attrs: Record<string, string | number>): KeyValue[] =>
  Object.entries(attrs).map(([key, v]) => ({ key, value: typeof v === 'string' ? { stringValue: v } : { intValue: v } }));

function span(attrs: Record<string, string | number>, overrides: Partial<Span> = {}): Span {
  return {
    traceId: Buffer.alloc(16, 0xab), spanId: Buffer.alloc(8, 0xcd), name: 's', kind: SPAN_KIND_CLIENT,
    startTimeUnixNano: 1_700_000_000_000_000_000, endTimeUnixNano: 1_700_000_000_250_000_000, attributes: kv(attrs), status: null, ...overrides,
  };
}

const mapped = (s: Span): MappedSpan => {
  const out = mapSpan(s);
  if (out.kind !== 'event') throw new Error(`expected an event, got ${out.kind}`);
  return out.event;
};

const base = { 'http.request.method': 'GET', 'url.full': 'https://api.example.com/a/1', 'http.response.status_code': 201 };

describe('span → event mapping', () => {
  const rows: Array<[keyof typeof HTTP_ATTRIBUTES, string, string | number, Partial<MappedSpan>]> = [
    ['method', 'http.request.method', 'patch', { method: 'PATCH' }],
    ['method', 'http.method', 'delete', { method: 'DELETE' }],
    ['url', 'url.full', 'https://x.example.org/users/42?q=1', { url_host: 'x.example.org', url_path: '/users/{id}' }],
    ['url', 'http.url', 'http://y.example.org/v2/things', { url_host: 'y.example.org', url_path: '/v2/things' }],
    ['url', 'url.full', 'https://user:pw@Z.Example:8443/a/77?c=1#frag', { url_host: 'z.example', url_path: '/a/{id}' }],
    ['url', 'url.full', 'https://bare.example', { url_host: 'bare.example', url_path: '/' }],
    ['host', 'server.address', 'Server.Example', { url_host: 'server.example' }],
    ['host', 'net.peer.name', 'peer.example', { url_host: 'peer.example' }],
    ['host', 'http.host', 'host.example', { url_host: 'host.example' }],
    ['path', 'url.path', '/orders/123456', { url_path: '/orders/{id}' }],
    ['path', 'http.target', '/search?q=x', { url_path: '/search' }],
    ['status', 'http.response.status_code', 404, { status_code: 404 }],
    ['status', 'http.status_code', 500, { status_code: 500 }],
  ];
  it.each(rows)('%s from %s', (field, key, value, expected) => {
    const attrs: Record<string, string | number> = field === 'method' ? { [key]: value } : { 'http.request.method': 'GET', [key]: value };
    expect(HTTP_ATTRIBUTES[field]).toContain(key);
    expect(mapped(span(attrs))).toMatchObject(expected);
  });

  it('takes the time, latency and ids from the span', () => {
    expect(mapped(span(base))).toMatchObject({
      ts: 1_700_000_000_000, latency_ms: 250, trace_id: 'ab'.repeat(16), span_id: 'cd'.repeat(8), request_id: `${'ab'.repeat(16)}:${'cd'.repeat(8)}`,
      policy_result: 'allowed', deny_reason: null, status_code: 201, gen_ai: null,
    });
  });

  it('gives a span with status error policy_result error', () => {
    expect(mapped(span(base, { status: { code: 2, message: 'boom' } })).policy_result).toBe('error');
  });

  it('lets corral.policy.result and corral.policy.rule decide', () => {
    expect(mapped(span({ ...base, 'corral.policy.result': 'denied', 'corral.policy.rule': 'no-writes' }))).toMatchObject({
      policy_result: 'denied', deny_reason: 'no-writes', status_code: null, latency_ms: null,
    });
    expect(mapped(span({ ...base, 'corral.policy.result': 'allowed', 'corral.policy.rule': 'dry-run-rule' }, { status: { code: 2, message: '' } }))).toMatchObject({
      policy_result: 'allowed', deny_reason: 'dry-run-rule',
    });
    expect(mapped(span({ ...base, 'corral.policy.result': 'maybe' })).policy_result).toBe('allowed');
  });

  it('makes a GenAI span without HTTP attributes an event, host from server.address or the provider', () => {
    expect(mapped(span({ 'gen_ai.provider.name': 'openai', 'gen_ai.operation.name': 'chat' }, { kind: 1 }))).toMatchObject({
      method: 'POST', url_host: 'openai', url_path: '/chat', status_code: null, gen_ai: JSON.stringify({ system: 'openai', operation: 'chat' }),
    });
    expect(mapped(span({ 'gen_ai.system': 'anthropic', 'server.address': 'api.anthropic.com' }, { kind: 1 })).url_host).toBe('api.anthropic.com');
  });

  it('skips server spans, internal spans and client spans without HTTP or GenAI attributes', () => {
    expect(mapSpan(span(base, { kind: 2 })).kind).toBe('skipped');
    expect(mapSpan(span({ 'db.system': 'postgresql' }, { kind: 1 })).kind).toBe('skipped');
    expect(mapSpan(span({ 'rpc.system': 'grpc' })).kind).toBe('skipped');
  });

  it('refuses a span without proper ids', () => {
    expect(mapSpan(span(base, { spanId: Buffer.alloc(0) }))).toEqual({ kind: 'invalid', reason: expect.stringMatching(/span_id/) as unknown });
  });

  it('clamps negative and huge durations', () => {
    expect(mapped(span(base, { endTimeUnixNano: 1 })).latency_ms).toBe(0);
    expect(mapped(span(base, { endTimeUnixNano: 1_900_000_000_000_000_000 })).latency_ms).toBe(86_400_000);
  });
});

describe('path templates', () => {
  it.each([
    ['/users/123/orders', '/users/{id}/orders'],
    ['/items/6f1c2a9e-8a5b-4a55-9f7e-2b8b1f3d4c5e', '/items/{id}'],
    ['/blobs/9f8e7d6c5b4a3928', '/blobs/{id}'],
    ['/v1/chat/completions', '/v1/chat/completions'],
    ['/tokens/AbCdEfGhIjKlMnOpQrSt12', '/tokens/{id}'],
    ['/', '/'],
  ])('%s → %s', (path, template) => expect(templatePath(path)).toBe(template));
});
