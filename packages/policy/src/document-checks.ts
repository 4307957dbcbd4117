import type { BodyMatch, HeaderMatch, Matcher, PolicyRule } from '@corral/contracts';
import { globProblem } from './glob.js';
import { jsonPathPattern } from './jsonpath.js';

/**
 * The checks of a policy document that a JSON schema cannot say (contract section 6). The
 * server runs them after its schema check when a document is created, and `compile` runs them
 * before building matchers, so the engine accepts exactly the documents the server accepts.
 */
export interface RuleProblem {
  /** `rules[1].deny.url`: the document's own spelling. */
  field: string;
  message: string;
  ruleIndex: number;
}

function headerProblems(h: HeaderMatch, at: string): Array<{ field: string; message: string }> {
  const ops = (['exact', 'prefix', 'contains', 'present'] as const).filter((op) => h[op] !== undefined);
  return ops.length === 1 ? [] : [{ field: at, message: 'needs exactly one of exact, prefix, contains, present' }];
}

function bodyProblems(b: BodyMatch, at: string): Array<{ field: string; message: string }> {
  const problems: Array<{ field: string; message: string }> = [];
  if (!jsonPathPattern.test(b.jsonpath)) problems.push({ field: `${at}.jsonpath`, message: 'is not a JSONPath like $.amount or $.items[0].sku' });
  const ops = (['exact', 'in', 'prefix', 'contains'] as const).filter((op) => b[op] !== undefined);
  const range = b.min !== undefined || b.max !== undefined;
  if (ops.length + (range ? 1 : 0) !== 1) problems.push({ field: at, message: 'needs one of exact, in, prefix, contains, or min and/or max' });
  if (b.min !== undefined && b.max !== undefined && b.min > b.max) problems.push({ field: at, message: 'min is greater than max' });
  return problems;
}

function matcherProblems(m: Matcher, at: string): Array<{ field: string; message: string }> {
  const problems: Array<{ field: string; message: string }> = [];
  if (m.method === undefined && m.url === undefined && m.headers === undefined && m.body === undefined) {
    problems.push({ field: at, message: 'needs at least one of method, url, headers, body' });
  }
  const glob = m.url === undefined ? undefined : globProblem(m.url);
  if (glob) problems.push({ field: `${at}.url`, message: glob });
  m.headers?.forEach((h, i) => problems.push(...headerProblems(h, `${at}.headers[${i}]`)));
  m.body?.forEach((b, i) => problems.push(...bodyProblems(b, `${at}.body[${i}]`)));
  return problems;
}

/** Problems of one rule whose shape is already known to be a PolicyRule. */
export function ruleProblems(rule: PolicyRule, at: string): Array<{ field: string; message: string }> {
  const kinds = (['allow', 'deny', 'limit'] as const).filter((k) => rule[k] !== undefined);
  if (kinds.length !== 1) return [{ field: at, message: 'needs exactly one of allow, deny, limit' }];
  if (rule.allow) return matcherProblems(rule.allow, `${at}.allow`);
  if (rule.deny) return matcherProblems(rule.deny, `${at}.deny`);
  return rule.limit?.match ? matcherProblems(rule.limit.match, `${at}.limit.match`) : [];
}

/**
 * Names must be unique among every rule that has one; the other checks run on each rule not in
 * `misshapen` (rules whose shape failed the schema, so their parts cannot be read as typed).
 */
export function rulesProblems(rules: readonly unknown[], misshapen: ReadonlySet<number> = new Set()): RuleProblem[] {
  const problems: RuleProblem[] = [];
  const seen = new Set<string>();
  rules.forEach((rule, i) => {
    const name = (rule as { name?: unknown } | null)?.name;
    if (typeof name === 'string') {
      if (seen.has(name)) problems.push({ field: `rules[${i}].name`, message: 'repeats the name of an earlier rule; names must be unique', ruleIndex: i });
      seen.add(name);
    }
    if (!misshapen.has(i)) for (const p of ruleProblems(rule as PolicyRule, `rules[${i}]`)) problems.push({ ...p, ruleIndex: i });
  });
  return problems;
}
