import { type FieldError, type PolicyDocument, PolicyDocumentInput } from '@corral/contracts';
import { rulesProblems } from '@corral/policy';
import { Ajv, type ErrorObject } from 'ajv';
import canonicalizeModule from 'canonicalize';
import { createHash } from 'node:crypto';
import { parseDocument } from 'yaml';
import { ValidationError } from '../../errors.js';
import { describeSchemaErrors } from '../../lib/validation-errors.js';

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

/** A problem in the document; `ruleIndex` when it lies in one rule, which `rule` then names. */
type Problem = FieldError & { rule?: string; ruleIndex?: number };

const ruleAt = /^\/rules\/(\d+)(?:\/|$)/;

/** `rules[1].deny.method`: the document's own spelling, the one its errors are read against. */
const fieldOf = (path: readonly string[]) => path.map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`)).join('').replace(/^\./, '');

function shapeProblems(raw: object, errors: readonly ErrorObject[]): Problem[] {
  return describeSchemaErrors(errors).map(({ path, message }) => {
    const ruleIndex = path[0] === 'rules' && path[1] !== undefined && /^\d+$/.test(path[1]) ? Number(path[1]) : undefined;
    return { field: fieldOf(path), message, ...(ruleIndex !== undefined ? { rule: ruleLabel(raw, ruleIndex), ruleIndex } : {}) };
  });
}

function fail(source: PolicySource, problems: Problem[]): never {
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
 * Checks the whole document and fills in its defaults. Every problem is reported at once (up to
 * 20), shape and rule checks together, in document order, each naming the rule it is in, so one
 * round trip fixes a document.
 */
export function validatePolicy(raw: unknown, source: PolicySource): PolicyDocument {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) fail(source, [{ field: '', message: 'must be an object' }]);
  const shapeValid = checkShape(raw);
  const errors = checkShape.errors ?? [];
  const problems = shapeValid ? [] : shapeProblems(raw, errors);
  const misshapen = new Set(errors.flatMap((e) => {
    const at = ruleAt.exec(e.instancePath);
    return at ? [Number(at[1])] : [];
  }));
  const rules: unknown = (raw as { rules?: unknown }).rules;
  // The rule checks are the policy engine's own, so the server accepts what the SDK can compile.
  if (Array.isArray(rules)) problems.push(...rulesProblems(rules, misshapen).map((p) => ({ ...p, rule: ruleLabel(raw, p.ruleIndex) })));
  // Stable: within a rule, shape problems stay ahead of the rule checks.
  problems.sort((a, b) => (a.ruleIndex ?? -1) - (b.ruleIndex ?? -1));
  if (!shapeValid || problems.length > 0) fail(source, problems);
  return { mode: raw.mode ?? 'dry_run', default: raw.default, rules: raw.rules ?? [] };
}
