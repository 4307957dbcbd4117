/** One line of a diff: kept (' '), removed ('-') or added ('+'). */
export interface DiffLine {
  op: ' ' | '-' | '+';
  text: string;
}

/**
 * A line diff by longest common subsequence: enough for policy documents (at most 200 rules,
 * a few thousand lines), shared by the CLI's `policies diff` and the dashboard's policy page.
 */
export function diffLines(before: string, after: string): DiffLine[] {
  const a = before.split('\n');
  const b = after.split('\n');
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    const row = lcs[i] as number[];
    const next = lcs[i + 1] as number[];
    for (let j = b.length - 1; j >= 0; j--) row[j] = a[i] === b[j] ? (next[j + 1] as number) + 1 : Math.max(next[j] as number, row[j + 1] as number);
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ op: ' ', text: a[i] as string });
      i++;
      j++;
    } else if ((lcs[i + 1]?.[j] ?? 0) >= (lcs[i]?.[j + 1] ?? 0)) out.push({ op: '-', text: a[i++] as string });
    else out.push({ op: '+', text: b[j++] as string });
  }
  while (i < a.length) out.push({ op: '-', text: a[i++] as string });
  while (j < b.length) out.push({ op: '+', text: b[j++] as string });
  return out;
}

/** A policy document as the stable, indented JSON both sides of a diff are compared in. */
export const policyText = (policy: unknown): string => JSON.stringify(policy, null, 2);
