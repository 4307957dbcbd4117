import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../errors.js';
import { hashPolicy, parseYamlPolicy, validatePolicy } from './policy-document.js';

function problemsOf(raw: unknown): { message: string; details: Array<{ field: string; message: string }> } {
  try {
    validatePolicy(raw, 'policy');
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    const e = err as ValidationError;
    return { message: e.message, details: e.details ?? [] };
  }
  throw new Error('expected the document to be refused');
}

describe('policy documents', () => {
  it('fills in the defaults of mode and rules', () => {
    expect(validatePolicy({ default: 'deny' }, 'policy')).toEqual({ mode: 'dry_run', default: 'deny', rules: [] });
  });

  it('requires default, naming it', () => {
    const { message, details } = problemsOf({ mode: 'enforce', rules: [] });
    expect(details).toEqual([{ field: 'policy.default', message: 'is required' }]);
    expect(message).toBe('Invalid policy: default is required');
    expect(problemsOf({}).details).toEqual([{ field: 'policy.default', message: 'is required' }]);
  });

  it('lists the allowed values of an enumeration once', () => {
    expect(problemsOf({ default: 'maybe', mode: 'on' }).details).toEqual([
      { field: 'policy.mode', message: 'must be one of enforce, dry_run' },
      { field: 'policy.default', message: 'must be one of allow, deny' },
    ]);
    expect(problemsOf({ default: 'allow', rules: [{ name: 'm', deny: { method: ['FETCH'] } }] }).details).toEqual([
      { field: 'policy.rules[0].deny.method[0]', message: 'rule "m" (rules[0]): must be one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, CONNECT, TRACE' },
    ]);
    expect(problemsOf({ default: 'allow', rules: [{ name: 'b', deny: { body: [{ jsonpath: '$.a', exact: {} }] } }] }).details).toEqual([
      { field: 'policy.rules[0].deny.body[0].exact', message: 'rule "b" (rules[0]): must be a string, a number, a boolean or null' },
    ]);
  });

  it('reports shape problems and rule checks together, in document order, checking every well-shaped rule', () => {
    const { message, details } = problemsOf({
      mode: 'loud',
      rules: [
        { name: 'bad-method', deny: { method: ['FETCH'], url: 'https://a.com/x' } },
        { name: 'scheme', deny: { url: 'https://b.com/x' } },
        { name: 'both', allow: { url: 'a.com' }, deny: { url: 'b.com' } },
        { name: 'scheme', allow: { url: 'c.com' } },
        { name: 'typo', deny: { urls: 'x' } },
      ],
    });
    expect(details).toEqual([
      { field: 'policy.default', message: 'is required' },
      { field: 'policy.mode', message: 'must be one of enforce, dry_run' },
      { field: 'policy.rules[0].deny.method[0]', message: expect.stringMatching(/^rule "bad-method" \(rules\[0\]\): must be one of GET, /) },
      { field: 'policy.rules[1].deny.url', message: 'rule "scheme" (rules[1]): is host/path without a scheme, e.g. api.stripe.com/v1/charges/**' },
      { field: 'policy.rules[2]', message: 'rule "both" (rules[2]): needs exactly one of allow, deny, limit' },
      { field: 'policy.rules[3].name', message: 'rule "scheme" (rules[3]): repeats the name of an earlier rule; names must be unique' },
      { field: 'policy.rules[4].deny.urls', message: 'rule "typo" (rules[4]): is not a known field' },
    ]);
    // The misshapen rules get no rule checks: rules[0]'s url and rules[4]'s empty matcher go unreported.
    expect(message).toBe('Invalid policy: default is required (and 6 more problems)');
  });

  it('accepts every rule kind and matcher part', () => {
    const doc = {
      mode: 'enforce',
      default: 'deny',
      rules: [
        { name: 'stripe reads', allow: { method: ['GET'], url: 'api.stripe.com/v1/**' } },
        { name: 'no refunds', deny: { url: 'api.stripe.com/v1/refunds/*', headers: [{ name: 'Idempotency-Key', present: true }] } },
        { name: 'big charges', deny: { body: [{ jsonpath: '$.amount', min: 100000 }, { jsonpath: "$.items[0]['sku']", in: ['a', 'b'] }] } },
        { name: 'openai budget', limit: { calls_per_minute: 60, per: 'endpoint', match: { url: 'api.openai.com/**' } } },
        { name: 'global budget', limit: { calls_per_minute: 600, per: 'global' } },
      ],
    };
    expect(validatePolicy(doc, 'policy')).toEqual(doc);
  });

  it('names the offending rule for a shape error', () => {
    const { message, details } = problemsOf({ default: 'allow', rules: [{ name: 'ok', allow: { url: 'a.com/**' } }, { name: 'bad-method', deny: { method: ['FETCH'] } }] });
    expect(message).toContain('rule "bad-method"');
    expect(details.some((d) => d.field.startsWith('policy.rules[1].deny.method') && d.message.includes('rule "bad-method"'))).toBe(true);
  });

  it('names the rule that has no action or two of them', () => {
    expect(problemsOf({ default: 'allow', rules: [{ name: 'nothing' }] }).message).toContain('rule "nothing" (rules[0]): rules[0] needs exactly one of allow, deny, limit');
    expect(problemsOf({ default: 'allow', rules: [{ name: 'both', allow: { url: 'a.com' }, deny: { url: 'b.com' } }] }).message).toContain('rule "both"');
  });

  it('refuses duplicate names, naming the second rule', () => {
    const { details } = problemsOf({ default: 'deny', rules: [{ name: 'x', allow: { url: 'a.com' } }, { name: 'x', deny: { url: 'b.com' } }] });
    expect(details).toEqual([{ field: 'policy.rules[1].name', message: 'rule "x" (rules[1]): repeats the name of an earlier rule; names must be unique' }]);
  });

  it('checks globs, JSONPaths, header and body operators', () => {
    const { details } = problemsOf({
      default: 'allow',
      rules: [
        { name: 'scheme', deny: { url: 'https://a.com/x' } },
        { name: 'partial-globstar', deny: { url: 'a.com/v1**' } },
        { name: 'empty-segment', deny: { url: 'a.com//x' } },
        { name: 'two-header-ops', deny: { headers: [{ name: 'x-a', exact: '1', prefix: '1' }] } },
        { name: 'bad-path', deny: { body: [{ jsonpath: 'amount', exact: 1 }] } },
        { name: 'bad-range', deny: { body: [{ jsonpath: '$.n', min: 5, max: 1 }] } },
        { name: 'empty-matcher', allow: {} },
      ],
    });
    const byRule = (name: string) => details.filter((d) => d.message.includes(`rule "${name}"`));
    for (const name of ['scheme', 'partial-globstar', 'empty-segment', 'two-header-ops', 'bad-path', 'bad-range', 'empty-matcher']) {
      expect(byRule(name).length, name).toBeGreaterThan(0);
    }
  });

  it('refuses unknown fields and more than 200 rules', () => {
    expect(problemsOf({ mode: 'enforce', default: 'allow', extra: 1 }).details).toEqual([{ field: 'policy.extra', message: 'is not a known field' }]);
    const rules = Array.from({ length: 201 }, (_, i) => ({ name: `r${i}`, allow: { url: 'a.com' } }));
    expect(problemsOf({ default: 'allow', rules }).details).toEqual([{ field: 'policy.rules', message: 'must NOT have more than 200 items' }]);
    expect(problemsOf([]).message).toContain('must be an object');
  });

  it('reads YAML, and reports where YAML is broken', () => {
    const doc = parseYamlPolicy('mode: enforce\ndefault: deny\nrules:\n  - name: reads\n    allow:\n      method: [GET]\n');
    expect(validatePolicy(doc, 'yaml_content').rules).toEqual([{ name: 'reads', allow: { method: ['GET'] } }]);
    expect(() => parseYamlPolicy('mode: enforce\nrules: [\n')).toThrow(/not valid YAML/);
    expect(() => parseYamlPolicy('a: 1\na: 2\n')).toThrow(ValidationError);
  });

  it('hashes canonical JSON: key order does not matter, content does', () => {
    const a = validatePolicy({ mode: 'enforce', default: 'allow', rules: [{ name: 'r', deny: { url: 'a.com', method: ['GET'] } }] }, 'policy');
    const b = validatePolicy({ rules: [{ deny: { method: ['GET'], url: 'a.com' }, name: 'r' }], default: 'allow', mode: 'enforce' }, 'policy');
    expect(hashPolicy(a)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(hashPolicy(a)).toBe(hashPolicy(b));
    expect(hashPolicy({ ...a, mode: 'dry_run' })).not.toBe(hashPolicy(a));
  });
});
