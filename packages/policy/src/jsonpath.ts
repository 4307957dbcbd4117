/**
 * The JSONPath subset policy body matchers use: `$`, `.name`, `[0]`, `['name']`, `["name"]`,
 * `[*]` and `.*`. A path with a wildcard selects every value it reaches.
 */
export const jsonPathPattern = /^\$(?:\.[A-Za-z_$][\w$-]*|\[(?:\d+|\*|'[^']*'|"[^"]*")\]|\.\*)*$/;

type Step = { kind: 'key'; key: string } | { kind: 'index'; index: number } | { kind: 'any' };

const stepPattern = /\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\['([^']*)'\]|\["([^"]*)"\]|\[\*\]|\.\*/g;

export function parseJsonPath(path: string): Step[] {
  if (!jsonPathPattern.test(path)) throw new Error(`not a JSONPath: ${path}`);
  const steps: Step[] = [];
  for (const m of path.slice(1).matchAll(stepPattern)) {
    const key = m[1] ?? m[3] ?? m[4];
    if (key !== undefined) steps.push({ kind: 'key', key });
    else if (m[2] !== undefined) steps.push({ kind: 'index', index: Number(m[2]) });
    else steps.push({ kind: 'any' });
  }
  return steps;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object';

/** Calls `visit` with each value the path selects; stops as soon as `visit` returns true. */
export function someAt(value: unknown, steps: readonly Step[], visit: (v: unknown) => boolean, from = 0): boolean {
  if (from === steps.length) return visit(value);
  const step = steps[from];
  if (step === undefined || !isObject(value)) return false;
  if (step.kind === 'key') {
    return !Array.isArray(value) && Object.hasOwn(value, step.key) ? someAt(value[step.key], steps, visit, from + 1) : false;
  }
  if (step.kind === 'index') {
    return Array.isArray(value) && step.index < value.length ? someAt(value[step.index], steps, visit, from + 1) : false;
  }
  const children: unknown[] = Array.isArray(value) ? value : Object.values(value);
  for (const child of children) if (someAt(child, steps, visit, from + 1)) return true;
  return false;
}
