import type { PolicyDocument } from '@corral/contracts';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compile, compileGlob, type Decision, globTarget, PolicyCompileError, type PolicyRequest } from '../src/index.js';

function req(method: string, url: string, init: { headers?: Record<string, string>; body?: unknown; endpoint?: string } = {}): PolicyRequest {
  const u = new URL(url);
  const headers = new Map(Object.entries(init.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  return {
    method, host: u.host.toLowerCase(), path: u.pathname,
    header: (name) => headers.get(name) ?? null,
    body: () => init.body,
    ...(init.endpoint ? { endpoint: init.endpoint } : {}),
  };
}

const doc = (rules: PolicyDocument['rules'], over: Partial<PolicyDocument> = {}): PolicyDocument => ({ mode: 'enforce', default: 'allow', rules, ...over });

describe('policy engine', () => {
  it('decides in the contract order: kill switch, rate limits, deny, allow, default', () => {
    const policy = compile(doc([
      { name: 'allow stripe', allow: { url: 'api.stripe.com/**' } },
      { name: 'no refunds', deny: { url: 'api.stripe.com/v1/refunds/*' } },
      { name: 'budget', limit: { calls_per_minute: 2, per: 'global', match: { url: 'api.stripe.com/**' } } },
    ], { default: 'deny' }));
    const now = 1_000_000;
    expect(policy.evaluate(req('GET', 'https://api.stripe.com/v1/refunds/re_1'), { now })).toMatchObject({ allowed: false, reason: 'rule', rule: 'no refunds', denyReason: 'no refunds' });
    expect(policy.evaluate(req('GET', 'https://api.stripe.com/v1/charges'), { now })).toMatchObject({ allowed: true, rule: 'allow stripe', denyReason: null });
    // The limit counted both calls above; the third in the same instant is refused before the deny rules.
    expect(policy.evaluate(req('GET', 'https://api.stripe.com/v1/refunds/re_1'), { now })).toMatchObject({ allowed: false, reason: 'rate_limit', rule: 'budget' });
    expect(policy.evaluate(req('GET', 'https://example.com/'), { now })).toMatchObject({ allowed: false, reason: 'default', rule: null, denyReason: 'default' });
    expect(policy.evaluate(req('GET', 'https://api.stripe.com/v1/charges'), { now, killSwitch: true })).toMatchObject({ allowed: false, reason: 'kill_switch', denyReason: 'kill_switch' });
  });

  it('refills rate limits over the minute and counts per endpoint separately', () => {
    const policy = compile(doc([{ name: 'per endpoint', limit: { calls_per_minute: 60, per: 'endpoint' } }]));
    const t0 = 5_000_000;
    for (let i = 0; i < 60; i++) expect(policy.evaluate(req('GET', 'https://a.com/x'), { now: t0 }).allowed).toBe(true);
    expect(policy.evaluate(req('GET', 'https://a.com/x'), { now: t0 })).toMatchObject({ allowed: false, reason: 'rate_limit' });
    expect(policy.evaluate(req('GET', 'https://a.com/y'), { now: t0 }).allowed).toBe(true);
    expect(policy.evaluate(req('POST', 'https://a.com/x'), { now: t0 }).allowed).toBe(true);
    // One call per second comes back.
    expect(policy.evaluate(req('GET', 'https://a.com/x'), { now: t0 + 1000 }).allowed).toBe(true);
    expect(policy.evaluate(req('GET', 'https://a.com/x'), { now: t0 + 1000 }).allowed).toBe(false);
    // The SDK's endpoint key (path template) groups ids together.
    const templated = compile(doc([{ name: 'one', limit: { calls_per_minute: 1, per: 'endpoint' } }]));
    expect(templated.evaluate(req('GET', 'https://a.com/u/1', { endpoint: 'GET a.com/u/{id}' }), { now: t0 }).allowed).toBe(true);
    expect(templated.evaluate(req('GET', 'https://a.com/u/2', { endpoint: 'GET a.com/u/{id}' }), { now: t0 }).allowed).toBe(false);
  });

  it('in dry_run lets would-be-denied calls through with the rule as deny_reason', () => {
    const policy = compile(doc([{ name: 'no deletes', deny: { method: ['DELETE'] } }], { mode: 'dry_run', default: 'deny' }));
    expect(policy.evaluate(req('DELETE', 'https://a.com/x'))).toMatchObject({ allowed: true, dryRun: true, reason: 'rule', denyReason: 'no deletes' });
    expect(policy.evaluate(req('GET', 'https://a.com/x'))).toMatchObject({ allowed: true, dryRun: true, reason: 'default', denyReason: 'default' });
    // The kill switch is not a policy: it blocks in dry_run too.
    expect(policy.evaluate(req('GET', 'https://a.com/x'), { killSwitch: true })).toMatchObject({ allowed: false, reason: 'kill_switch' });
  });

  it('matches methods, headers and JSON bodies', () => {
    const policy = compile(doc([
      { name: 'idempotent', deny: { method: ['POST'], headers: [{ name: 'Idempotency-Key', present: false }] } },
      { name: 'bearer', deny: { headers: [{ name: 'authorization', prefix: 'Bearer sk_live' }] } },
      { name: 'contains', deny: { headers: [{ name: 'x-env', contains: 'prod' }] } },
      { name: 'exact', deny: { headers: [{ name: 'x-mode', exact: 'danger' }] } },
      { name: 'big', deny: { body: [{ jsonpath: '$.amount', min: 1000 }] } },
      { name: 'model', deny: { body: [{ jsonpath: '$.model', in: ['gpt-expensive', 'o-max'] }] } },
      { name: 'any item', deny: { body: [{ jsonpath: '$.items[*].sku', prefix: 'gift-' }] } },
      { name: 'quoted', deny: { body: [{ jsonpath: "$['odd key']", exact: true }] } },
      { name: 'text', deny: { body: [{ jsonpath: '$.note', contains: 'drop table' }] } },
      { name: 'window', deny: { body: [{ jsonpath: '$.n', min: 5, max: 7 }] } },
    ]));
    const h = { 'idempotency-key': 'k' };
    expect(policy.evaluate(req('POST', 'https://a.com/x')).rule).toBe('idempotent');
    expect(policy.evaluate(req('POST', 'https://a.com/x', { headers: h })).allowed).toBe(true);
    expect(policy.evaluate(req('GET', 'https://a.com/x', { headers: { Authorization: 'Bearer sk_live_1' } })).rule).toBe('bearer');
    expect(policy.evaluate(req('GET', 'https://a.com/x', { headers: { Authorization: 'Bearer sk_test_1' } })).allowed).toBe(true);
    expect(policy.evaluate(req('GET', 'https://a.com/x', { headers: { 'x-env': 'eu-prod-1' } })).rule).toBe('contains');
    expect(policy.evaluate(req('GET', 'https://a.com/x', { headers: { 'x-mode': 'danger' } })).rule).toBe('exact');
    expect(policy.evaluate(req('GET', 'https://a.com/x', { headers: { 'x-mode': 'danger!' } })).allowed).toBe(true);
    expect(policy.evaluate(req('PUT', 'https://a.com/x', { body: { amount: 1000 } })).rule).toBe('big');
    expect(policy.evaluate(req('PUT', 'https://a.com/x', { body: { amount: 999 } })).allowed).toBe(true);
    expect(policy.evaluate(req('PUT', 'https://a.com/x', { body: { amount: '5000' } })).allowed).toBe(true);
    expect(policy.evaluate(req('PUT', 'https://a.com/x', { body: { model: 'o-max' } })).rule).toBe('model');
    expect(policy.evaluate(req('PUT', 'https://a.com/x', { body: { items: [{ sku: 'a' }, { sku: 'gift-1' }] } })).rule).toBe('any item');
    expect(policy.evaluate(req('PUT', 'https://a.com/x', { body: { items: [{ sku: 'a' }] } })).allowed).toBe(true);
    expect(policy.evaluate(req('PUT', 'https://a.com/x', { body: { 'odd key': true } })).rule).toBe('quoted');
    expect(policy.evaluate(req('PUT', 'https://a.com/x', { body: { note: 'please drop table users' } })).rule).toBe('text');
    expect(policy.evaluate(req('PUT', 'https://a.com/x', { body: { n: 6 } })).rule).toBe('window');
    expect(policy.evaluate(req('PUT', 'https://a.com/x', { body: { n: 8 } })).allowed).toBe(true);
    expect(policy.evaluate(req('PUT', 'https://a.com/x', { body: 'not json' })).allowed).toBe(true);
  });

  it('reads the body only when a rule needs it', () => {
    let reads = 0;
    const policy = compile(doc([{ name: 'gets', deny: { method: ['GET'] } }, { name: 'b', deny: { method: ['POST'], body: [{ jsonpath: '$.a', exact: 1 }] } }]));
    const r = (method: string): PolicyRequest => ({ method, host: 'a.com', path: '/', header: () => null, body: () => { reads++; return { a: 1 }; } });
    expect(policy.evaluate(r('GET')).rule).toBe('gets');
    expect(policy.evaluate(r('PUT')).allowed).toBe(true);
    expect(reads).toBe(0);
    expect(policy.evaluate(r('POST')).rule).toBe('b');
    expect(reads).toBe(1);
  });

  it('refuses documents the server refuses, naming the rule', () => {
    const bad: PolicyDocument[] = [
      doc([{ name: 'x', deny: { url: 'https://a.com/x' } }]),
      doc([{ name: 'x', deny: { url: 'a.com//x' } }]),
      doc([{ name: 'x', deny: { url: 'a.com/a**' } }]),
      doc([{ name: 'x', deny: {} }]),
      doc([{ name: 'x', allow: { url: 'a.com' }, deny: { url: 'b.com' } }]),
      doc([{ name: 'x', deny: { url: 'a.com' } }, { name: 'x', allow: { url: 'b.com' } }]),
      doc([{ name: 'x', deny: { body: [{ jsonpath: 'amount', exact: 1 }] } }]),
      doc([{ name: 'x', deny: { body: [{ jsonpath: '$.a', min: 5, max: 1 }] } }]),
      doc([{ name: 'x', deny: { headers: [{ name: 'a', exact: 'x', prefix: 'y' }] } }]),
      doc(Array.from({ length: 201 }, (_, i) => ({ name: `r${i}`, deny: { url: 'a.com' } }))),
    ];
    for (const d of bad) expect(() => compile(d)).toThrow(PolicyCompileError);
    expect(() => compile(doc([{ name: 'x', deny: { url: 'https://a.com/x' } }]))).toThrow(/rules\[0\]\.deny\.url is host\/path without a scheme/);
    expect(compile(doc(Array.from({ length: 200 }, (_, i) => ({ name: `r${i}`, deny: { url: `h${i}.com/**` } })))).ruleCount).toBe(200);
  });

  it('returns shared decision objects: evaluation allocates no decision', () => {
    const policy = compile(doc([{ name: 'd', deny: { method: ['DELETE'] } }]));
    expect(policy.evaluate(req('DELETE', 'https://a.com/'))).toBe(policy.evaluate(req('DELETE', 'https://b.com/')));
    expect(policy.evaluate(req('GET', 'https://a.com/'))).toBe(policy.evaluate(req('GET', 'https://b.com/z')));
    expect(Object.isFrozen(policy.evaluate(req('GET', 'https://a.com/')))).toBe(true);
  });
});

describe('rules indexed by host', () => {
  // A reference that walks every rule in document order (contract section 6), with no index.
  function linear(document: PolicyDocument, method: string, host: string, path: string): string | null {
    const matches = (m: { url?: string; method?: string[] } | undefined) =>
      m !== undefined && (m.method === undefined || m.method.includes(method)) &&
      (m.url === undefined || compileGlob(m.url).matches(globTarget(host, path)));
    for (const r of document.rules) if (r.deny && matches(r.deny)) return `deny:${r.name}`;
    for (const r of document.rules) if (r.allow && matches(r.allow)) return `allow:${r.name}`;
    return document.default;
  }
  const outcome = (d: Decision): string => (d.rule === null ? (d.allowed ? 'allow' : 'deny') : `${d.reason === null ? 'allow' : 'deny'}:${d.rule}`);

  const hostArb = fc.constantFrom('api.a.com', 'API.A.com', 'b.io', 'b.io:8443', 'c.net');
  const globHostArb = fc.constantFrom('api.a.com', 'Api.A.com', 'b.io', 'b.io:8443', '*.io', 'api.*.com', '*', '**');
  const pathArb = fc.array(fc.constantFrom('v1', 'x', 'y'), { minLength: 0, maxLength: 3 });
  const matcherArb = fc.record({
    url: fc.option(fc.tuple(globHostArb, fc.array(fc.constantFrom('v1', 'x', '*', '**'), { maxLength: 2 })).map(([h, p]) => [h, ...p].join('/')), { nil: undefined }),
    method: fc.option(fc.subarray(['GET', 'POST'] as const, { minLength: 1 }).map((m) => [...m]), { nil: undefined }),
  }).filter((m) => m.url !== undefined || m.method !== undefined);
  const ruleArb = fc.tuple(fc.boolean(), matcherArb);

  it('decides as a walk of every rule in document order would', () => {
    fc.assert(fc.property(fc.array(ruleArb, { minLength: 1, maxLength: 12 }), fc.constantFrom('allow', 'deny') , hostArb, pathArb, fc.constantFrom('GET', 'POST'),
      (rules, dflt, host, segments, method) => {
        const document = doc(rules.map(([deny, m], i) => (deny ? { name: `r${i}`, deny: m } : { name: `r${i}`, allow: m })), { default: dflt });
        const path = `/${segments.join('/')}`;
        const request = { method, host: host.toLowerCase(), path, header: () => null, body: () => undefined };
        expect(outcome(compile(document).evaluate(request))).toBe(linear(document, method, host, path));
      }), { numRuns: 2000 });
  });

  it('keeps document order between a rule for any host and one for the call\'s host', () => {
    const policy = compile(doc([
      { name: 'no deletes anywhere', deny: { method: ['DELETE'] } },
      { name: 'stripe refunds', deny: { url: 'api.stripe.com/v1/refunds/**' } },
      { name: 'stripe', allow: { url: 'API.Stripe.com/**' } },
      { name: 'any io', allow: { url: '*.io/**' } },
    ], { default: 'deny' }));
    expect(policy.evaluate(req('DELETE', 'https://api.stripe.com/v1/charges/ch_1'))).toMatchObject({ rule: 'no deletes anywhere' });
    expect(policy.evaluate(req('POST', 'https://api.stripe.com/v1/refunds'))).toMatchObject({ rule: 'stripe refunds' });
    expect(policy.evaluate(req('GET', 'https://api.stripe.com/v1/charges'))).toMatchObject({ allowed: true, rule: 'stripe' });
    expect(policy.evaluate(req('GET', 'https://x.io/'))).toMatchObject({ allowed: true, rule: 'any io' });
    expect(policy.evaluate(req('GET', 'https://api.stripe.com:8443/v1/charges'))).toMatchObject({ allowed: false, reason: 'default' });
  });
});
