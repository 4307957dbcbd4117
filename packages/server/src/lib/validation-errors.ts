/**
 * One message per field from a JSON-schema validator's errors (Ajv's shape, which Fastify passes
 * on). Ajv reports a failed `anyOf` as one error per branch plus "must match a schema in anyOf",
 * so `null` for an `integer | null` field reads as three problems; a client wants to read what
 * the field may be, once.
 */

/** One error as Ajv reports it (and Fastify as `FastifySchemaValidationError`). */
export interface SchemaError {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** What is wrong with one field: its path from the validated value's root, and what to fix. */
export interface FieldProblem {
  /** Property names and array indexes, outermost first. */
  path: string[];
  message: string;
}

/** What a value may be, gathered from `type`, `const` and `enum` errors. */
interface Alternatives {
  values: unknown[];
  types: string[];
}

interface Item {
  /** Position in the validator's output, so the messages keep its order. */
  order: number;
  instancePath: string;
  path: string[];
  /** Set when the value is of the wrong kind (type, const, enum): those merge across branches. */
  kind?: Alternatives;
  message: string;
}

interface Combinator {
  order: number;
  instancePath: string;
  message: string;
  branches: Map<number, Array<Item | Combinator>>;
}

const isCombinator = (entry: Item | Combinator): entry is Combinator => 'branches' in entry;

function segmentsOf(instancePath: string): string[] {
  return instancePath === '' ? [] : instancePath.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function typesOf(type: unknown): string[] {
  if (Array.isArray(type)) return type.map(String);
  return typeof type === 'string' ? type.split(',') : [];
}

function toItem(error: SchemaError, order: number): Item {
  const base = { order, instancePath: error.instancePath, path: segmentsOf(error.instancePath), message: error.message ?? 'is invalid' };
  const { params } = error;
  switch (error.keyword) {
    case 'type':
      return { ...base, kind: { values: [], types: typesOf(params.type) } };
    case 'const':
      return { ...base, kind: { values: [params.allowedValue], types: [] } };
    case 'enum':
      return { ...base, kind: { values: Array.isArray(params.allowedValues) ? params.allowedValues : [], types: [] } };
    case 'required':
      return { ...base, path: [...base.path, String(params.missingProperty)], message: 'is required' };
    case 'additionalProperties':
      return { ...base, path: [...base.path, String(params.additionalProperty)], message: 'is not a known field' };
    default:
      return base;
  }
}

const schemaLocation = (schemaPath: string) => schemaPath.slice(0, schemaPath.lastIndexOf('/'));

/**
 * Ajv checks `type` next to `const` or `enum` in the same schema and reports both for `5` given
 * to `{type: 'string', enum: [...]}`; the allowed values say everything the type would.
 */
function withoutRedundantTypes(errors: readonly SchemaError[]): Array<{ error: SchemaError; order: number }> {
  const valued = new Set(
    errors.filter((e) => e.keyword === 'const' || e.keyword === 'enum').map((e) => `${e.instancePath}\u0000${schemaLocation(e.schemaPath)}`),
  );
  return errors
    .map((error, order) => ({ error, order }))
    .filter(({ error: e }) => e.keyword !== 'type' || !valued.has(`${e.instancePath}\u0000${schemaLocation(e.schemaPath)}`));
}

/** The prefixes of a JSON pointer, longest first: `/a/b` → `/a/b`, `/a`, ``. */
function pointerPrefixes(instancePath: string): string[] {
  const prefixes = [instancePath];
  for (let at = instancePath.lastIndexOf('/'); at >= 0; at = instancePath.lastIndexOf('/', at - 1)) {
    prefixes.push(instancePath.slice(0, at));
    if (at === 0) break;
  }
  return prefixes;
}

const branchStep = /\/(anyOf|oneOf)\/(\d+)(?=\/|$)/g;

/** The innermost combinator whose branch an error came from, and the branch's index. */
function parentOf(
  schemaPath: string,
  instancePath: string,
  combinators: ReadonlyMap<string, Combinator>,
): { parent: Combinator; branch: number } | undefined {
  const steps = [...schemaPath.matchAll(branchStep)].reverse();
  for (const step of steps) {
    const location = schemaPath.slice(0, step.index + 1 + (step[1] ?? '').length);
    for (const prefix of pointerPrefixes(instancePath)) {
      const parent = combinators.get(`${location}\u0000${prefix}`);
      if (parent) return { parent, branch: Number(step[2]) };
    }
  }
  return undefined;
}

function mergeAlternatives(all: readonly Alternatives[]): Alternatives {
  const values = new Map<string, unknown>();
  const types = new Set<string>();
  for (const a of all) {
    for (const v of a.values) values.set(JSON.stringify(v), v);
    for (const t of a.types) types.add(t);
  }
  return { values: [...values.values()], types: [...types] };
}

/**
 * A failed combinator: when every branch failed on the value's kind, one item saying what the
 * value may be; otherwise the problems of the branches the value's kind fitted, since those are
 * the ones the caller meant (600 for `integer (max 599) | null` is too large, not "not null").
 */
function resolve(combinator: Combinator): Item[] {
  const { order, instancePath, message } = combinator;
  if (combinator.branches.size === 0) return [{ order, instancePath, path: segmentsOf(instancePath), message }];
  const branches = [...combinator.branches.values()].map((members) => members.flatMap((m) => (isCombinator(m) ? resolve(m) : [m])));
  const wrongKind = (items: Item[]) => items.every((i) => i.kind !== undefined && i.instancePath === instancePath);
  if (branches.every(wrongKind)) {
    const items = branches.flat();
    return [{
      order: Math.min(...items.map((i) => i.order)),
      instancePath,
      path: segmentsOf(instancePath),
      kind: mergeAlternatives(items.map((i) => i.kind ?? { values: [], types: [] })),
      message: '',
    }];
  }
  return branches.filter((items) => !wrongKind(items)).flat();
}

const article = (type: string) => (type === 'null' ? 'null' : /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);
const joinOr = (words: readonly string[]) => (words.length <= 1 ? words.join('') : `${words.slice(0, -1).join(', ')} or ${words.at(-1) ?? ''}`);
const shown = (value: unknown) => (typeof value === 'string' && /^[\w.:/*-]+$/.test(value) ? value : JSON.stringify(value));

function describeAlternatives({ values, types }: Alternatives): string {
  const typeText = joinOr(types.map(article));
  if (values.length === 0) return `must be ${typeText}`;
  const valueText = values.length === 1 ? shown(values[0]) : `one of ${values.map(shown).join(', ')}`;
  return types.length === 0 ? `must be ${valueText}` : `must be ${valueText} or ${typeText}`;
}

/** The validator's errors as one problem per field and message, in the validator's order. */
export function describeSchemaErrors(errors: readonly SchemaError[]): FieldProblem[] {
  const kept = withoutRedundantTypes(errors);
  const combinators = new Map<string, Combinator>();
  for (const { error, order } of kept) {
    if (error.keyword !== 'anyOf' && error.keyword !== 'oneOf') continue;
    combinators.set(`${error.schemaPath}\u0000${error.instancePath}`, {
      order, instancePath: error.instancePath, message: error.message ?? 'is invalid', branches: new Map(),
    });
  }

  const top: Array<Item | Combinator> = [];
  for (const { error, order } of kept) {
    const entry = combinators.get(`${error.schemaPath}\u0000${error.instancePath}`) ?? toItem(error, order);
    const owner = parentOf(error.schemaPath, error.instancePath, combinators);
    if (!owner) {
      top.push(entry);
      continue;
    }
    const members = owner.parent.branches.get(owner.branch) ?? [];
    members.push(entry);
    owner.parent.branches.set(owner.branch, members);
  }

  const items = top.flatMap((entry) => (isCombinator(entry) ? resolve(entry) : [entry])).sort((a, b) => a.order - b.order);
  const byField = new Map<string, { path: string[]; kinds: Alternatives[]; messages: string[] }>();
  for (const item of items) {
    const key = item.path.join('\u0000');
    const field = byField.get(key) ?? { path: item.path, kinds: [], messages: [] };
    byField.set(key, field);
    if (item.kind) {
      // The merged alternatives take the place of the first kind error at this field.
      if (field.kinds.length === 0) field.messages.push('');
      field.kinds.push(item.kind);
    } else if (!field.messages.includes(item.message)) {
      field.messages.push(item.message);
    }
  }
  return [...byField.values()].flatMap(({ path, kinds, messages }) =>
    messages.map((message) => ({ path, message: message === '' ? describeAlternatives(mergeAlternatives(kinds)) : message })),
  );
}
