import {
  type BodyMatch, type FieldError, type HeaderMatch, type Matcher, type PolicyDocument, PolicyDocumentInput, type PolicyRule,
} from '@corral/contracts';
import { Ajv, type ErrorObject } from 'ajv';
import canonicalizeModule from 'canonicalize';
import { createHash } from 'node:crypto';
import { parseDocument } from 'yaml';
import { ValidationError } from '../../errors.js';

// canonicalize is CommonJS; its default export arrives wrapped under NodeNext.
const canonicalize = canonicalizeModule as unknown as (value: unknown) => string;

const ajv = new Ajv({ allErrors: true, strict: false });
const checkShape = ajv.compile<PolicyDocumentInput>(PolicyDocumentInput);
const MAX_DETAILS = 20;

/** Where the document came from, so errors point at the body field the caller used. */
export type PolicySource = 'policy' | 'yaml_content';

/** `sha256:<hex>` of the RFC 8785 canonical JSON: the same document always hashes the same. */
export function hashPolicy(document: PolicyDocument): string {
  return `sha256:${createHash('sha256').update(canonicalize(document), 'utf8').digest('hex')}`;
}

export function parseYamlPolicy(text: string): unknown {
  // Aliases are capped so a small "billion laughs" document cannot expand without bound.
  const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
  const [first] = doc.errors;
  if (first) {
    const line = first.linePos?.[0]?.line;
    const where = line ? ` at line ${line}` : '';
    throw new ValidationError(`yaml_content is not valid YAML${where}: ${first.message.split('\n')[0] ?? ''}`, [
      { field: 'yaml_content', message: `not valid YAML${where}` },
    ]);
  }
  try {
    return doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw new ValidationError(`yaml_content cannot be read: ${(err as Error).message}`, [{ field: 'yaml_content', message: 'cannot be read' }]);
  }
}

/** Names a rule by its name when it has one, else by its position. */
function ruleLabel(raw: unknown, index: number): string {
  const name = (raw as { rules?: Array<{ name?: unknown }> } | null)?.rules?.[index]?.name;
  return typeof name === 'string' && name.length > 0 ? `rule "${name}" (rules[${index}])` : `rules[${index}]`;
}

function shapeErrors(raw: unknown, errors: ErrorObject[]): Array<FieldError & { rule?: string }> {
  return errors.map((e) => {
    const parts = e.instancePath.split('/').slice(1);
    const extra = (e.params as { additionalProperty?: string; missingProperty?: string }).additionalProperty
      ?? (e.params as { missingProperty?: string }).missingProperty;
    const path = [...parts, ...(extra ? [extra] : [])].map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`)).join('').replace(/^\./, '');
    const message = e.keyword === 'additionalProperties' ? 'is not a known field' : (e.message ?? 'is invalid');
    const ruleIndex = parts[0] === 'rules' && parts[1] !== undefined ? Number(parts[1]) : undefined;
    return { field: path, message, ...(ruleIndex !== undefined ? { rule: ruleLabel(raw, ruleIndex) } : {}) };
  });
}

const jsonPathPattern = /^\$(?:\.[A-Za-z_$][\w$-]*|\[(?:\d+|\*|'[^']*'|"[^"]*")\]|\.\*)*$/;

/** `*` matches within one segment, `**` any number of whole segments; no scheme, no empty segment. */
function globProblem(glob: string): string | undefined {
  if (/\s/.test(glob)) return 'must not contain whitespace';
  if (glob.includes('://')) return 'is host/path without a scheme, e.g. api.stripe.com/v1/charges/**';
  const segments = glob.split('/');
  if (segments.some((s) => s === '')) return 'must not have empty segments (// or a leading or trailing /)';
  if (segments.some((s) => s.includes('**') && s !== '**')) return '** must be a whole segment';
  return undefined;
}

function headerProblems(h: HeaderMatch, at: string): FieldError[] {
  const ops = (['exact', 'prefix', 'contains', 'present'] as const).filter((op) => h[op] !== undefined);
  return ops.length === 1 ? [] : [{ field: at, message: 'needs exactly one of exact, prefix, contains, present' }];
}

function bodyProblems(b: BodyMatch, at: string): FieldError[] {
  const problems: FieldError[] = [];
  if (!jsonPathPattern.test(b.jsonpath)) problems.push({ field: `${at}.jsonpath`, message: 'is not a JSONPath like $.amount or $.items[0].sku' });
  const ops = (['exact', 'in', 'prefix', 'contains'] as const).filter((op) => b[op] !== undefined);
  const range = b.min !== undefined || b.max !== undefined;
  if (ops.length + (range ? 1 : 0) !== 1) problems.push({ field: at, message: 'needs one of exact, in, prefix, contains, or min and/or max' });
  if (b.min !== undefined && b.max !== undefined && b.min > b.max) problems.push({ field: at, message: 'min is greater than max' });
  return problems;
}

function matcherProblems(m: Matcher, at: string): FieldError[] {
  const problems: FieldError[] = [];
  if (m.method === undefined && m.url === undefined && m.headers === undefined && m.body === undefined) {
    problems.push({ field: at, message: 'needs at least one of method, url, headers, body' });
  }
  const glob = m.url === undefined ? undefined : globProblem(m.url);
  if (glob) problems.push({ field: `${at}.url`, message: glob });
  m.headers?.forEach((h, i) => problems.push(...headerProblems(h, `${at}.headers[${i}]`)));
  m.body?.forEach((b, i) => problems.push(...bodyProblems(b, `${at}.body[${i}]`)));
  return problems;
}

function ruleProblems(rule: PolicyRule, at: string): FieldError[] {
  const kinds = (['allow', 'deny', 'limit'] as const).filter((k) => rule[k] !== undefined);
  if (kinds.length !== 1) return [{ field: at, message: 'needs exactly one of allow, deny, limit' }];
  if (rule.allow) return matcherProblems(rule.allow, `${at}.allow`);
  if (rule.deny) return matcherProblems(rule.deny, `${at}.deny`);
  return rule.limit?.match ? matcherProblems(rule.limit.match, `${at}.limit.match`) : [];
}

function fail(source: PolicySource, problems: Array<FieldError & { rule?: string }>): never {
  const details = problems.slice(0, MAX_DETAILS).map((p) => ({
    field: p.field ? `${source}.${p.field}` : source,
    message: p.rule ? `${p.rule}: ${p.message}` : p.message,
  }));
  const first = problems[0];
  const head = first ? `${first.rule ? `${first.rule}: ` : ''}${first.field || 'policy'} ${first.message}` : 'invalid';
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''})` : '';
  throw new ValidationError(`Invalid policy: ${head}${more}`, details);
}

/**
 * Checks the whole document and fills in its defaults. Every problem is reported (up to 20),
 * each naming the rule it is in, so one round trip fixes a document.
 */
export function validatePolicy(raw: unknown, source: PolicySource): PolicyDocument {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) fail(source, [{ field: '', message: 'must be an object' }]);
  if (!checkShape(raw)) fail(source, shapeErrors(raw, checkShape.errors ?? []));
  const rules = raw.rules ?? [];
  const problems: Array<FieldError & { rule?: string }> = [];
  const seen = new Set<string>();
  rules.forEach((rule, i) => {
    const label = ruleLabel(raw, i);
    if (seen.has(rule.name)) problems.push({ field: `rules[${i}].name`, message: 'repeats the name of an earlier rule; names must be unique', rule: label });
    seen.add(rule.name);
    for (const p of ruleProblems(rule, `rules[${i}]`)) problems.push({ ...p, rule: label });
  });
  if (problems.length > 0) fail(source, problems);
  return { mode: raw.mode ?? 'dry_run', default: raw.default ?? 'allow', rules };
}
