import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileGlob, globProblem, globTarget } from '../src/index.js';

/** A plain reference: segment by segment, `**` by recursion, `*` by a within-segment match. */
function segmentMatches(pattern: string, text: string): boolean {
  if (pattern === '') return text === '';
  if (pattern[0] === '*') return [...Array(text.length + 1).keys()].some((i) => segmentMatches(pattern.slice(1), text.slice(i)));
  return text[0] === pattern[0] && segmentMatches(pattern.slice(1), text.slice(1));
}
function reference(glob: string[], target: string[]): boolean {
  if (glob.length === 0) return target.length === 0;
  const [head, ...rest] = glob;
  if (head === '**') return [...Array(target.length + 1).keys()].some((i) => reference(rest, target.slice(i)));
  return target.length > 0 && segmentMatches(head!, target[0]!) && reference(rest, target.slice(1));
}

const segmentChar = fc.constantFrom('a', 'b', '.', '-', '_', '{', '}', '(', '+', '?', '$');
const literal = fc.string({ unit: segmentChar, minLength: 1, maxLength: 4 });
const globSegment = fc.oneof(literal, fc.constant('*'), fc.constant('**'), fc.tuple(literal, literal).map(([a, b]) => `${a}*${b}`));
const globArb = fc.array(globSegment, { minLength: 1, maxLength: 5 });
const targetArb = fc.array(literal, { minLength: 1, maxLength: 6 });

describe('URL glob', () => {
  it('matches the examples of the contract', () => {
    const g = compileGlob('api.stripe.com/v1/charges/**');
    expect(g.matches('api.stripe.com/v1/charges')).toBe(true);
    expect(g.matches('api.stripe.com/v1/charges/ch_1/refunds')).toBe(true);
    expect(g.matches('api.stripe.com/v1/chargesx')).toBe(false);
    const one = compileGlob('api.stripe.com/v1/*/x');
    expect(one.matches('api.stripe.com/v1/a/x')).toBe(true);
    expect(one.matches('api.stripe.com/v1/a/b/x')).toBe(false);
    expect(compileGlob('**').matches('anything/at/all')).toBe(true);
    expect(compileGlob('**/v1/**').matches('h.com/v1')).toBe(true);
    expect(compileGlob('*.openai.com/**').matches('api.openai.com/v1/chat')).toBe(true);
    expect(compileGlob('*.openai.com/**').matches('openai.com.evil/v1')).toBe(false);
    expect(compileGlob('API.Example.com/Path').matches(globTarget('api.example.com', '/Path'))).toBe(true);
    expect(compileGlob('api.example.com/Path').matches(globTarget('api.example.com', '/path'))).toBe(false);
    expect(compileGlob('localhost:8080/x').matches(globTarget('localhost:8080', '/x'))).toBe(true);
  });

  it('agrees with a segment-by-segment reference matcher', () => {
    fc.assert(fc.property(globArb, targetArb, (glob, target) => {
      expect(compileGlob(glob.join('/')).matches(target.join('/'))).toBe(reference(glob, target));
    }), { numRuns: 3000 });
  });

  it('a literal glob matches exactly itself', () => {
    fc.assert(fc.property(targetArb, targetArb, (a, b) => {
      const g = compileGlob(a.join('/'));
      expect(g.matches(a.join('/'))).toBe(true);
      expect(g.matches(b.join('/'))).toBe(a.join('/') === b.join('/'));
    }));
  });

  it('`*` stands for exactly one segment and `**` for any number', () => {
    fc.assert(fc.property(targetArb, fc.nat(), (target, n) => {
      const i = n % target.length;
      const star = target.map((s, j) => (j === i ? '*' : s));
      expect(compileGlob(star.join('/')).matches(target.join('/'))).toBe(true);
      // One more segment after the star's position never matches a single `*`.
      const longer = [...target.slice(0, i + 1), 'extra', ...target.slice(i + 1)];
      expect(compileGlob(star.join('/')).matches(longer.join('/'))).toBe(false);
      const prefix = [...target.slice(0, i + 1), '**'];
      expect(compileGlob(prefix.join('/')).matches(target.join('/'))).toBe(true);
      expect(compileGlob(prefix.join('/')).matches(longer.join('/'))).toBe(true);
    }));
  });

  it('treats regular-expression characters literally', () => {
    fc.assert(fc.property(targetArb, (target) => {
      const text = target.join('/');
      const mangled = text.replace(/\./g, 'X');
      if (mangled !== text) expect(compileGlob(text).matches(mangled)).toBe(false);
    }));
  });

  it('refuses schemes, empty segments and partial **', () => {
    expect(globProblem('https://a.com')).toMatch(/scheme/);
    expect(globProblem('/a.com')).toMatch(/empty/);
    expect(globProblem('a.com/x**')).toMatch(/whole segment/);
    expect(globProblem('a .com')).toMatch(/whitespace/);
    expect(() => compileGlob('a.com//x')).toThrow();
  });
});
