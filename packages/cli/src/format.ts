/** Human output: aligned tables, short timestamps, and a sparkline for a time series. */

export type Cell = string | number | boolean | null | undefined;

export function cellText(value: Cell): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return String(value);
}

/** Columns padded to their widest cell; an empty list says so instead of printing a bare header. */
export function table(headers: readonly string[], rows: readonly Cell[][], empty = '(none)'): string {
  if (rows.length === 0) return empty;
  const text = rows.map((row) => row.map(cellText));
  const widths = headers.map((h, i) => Math.max(h.length, ...text.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers.map((h) => h.toUpperCase())), ...text.map(line)].join('\n');
}

/** Key: value lines for one object. */
export function fields(pairs: ReadonlyArray<[string, Cell]>): string {
  const width = Math.max(...pairs.map(([k]) => k.length)) + 2;
  return pairs.map(([k, v]) => `${`${k}:`.padEnd(width)}${cellText(v)}`).join('\n');
}

/** 2026-11-23T21:54:42.123Z → 2026-11-23 21:54:42 (UTC, always, so output does not depend on the machine). */
export const shortTime = (iso: string | null | undefined): string => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, '') : '-');

const ticks = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/** At most `width` values: neighbours summed, so a day of 15-minute buckets fits a terminal line. */
export function fit(values: readonly number[], width = 60): number[] {
  if (values.length <= width) return [...values];
  const size = Math.ceil(values.length / width);
  const out: number[] = [];
  for (let i = 0; i < values.length; i += size) out.push(values.slice(i, i + size).reduce((a, b) => a + b, 0));
  return out;
}

/** Values as block characters, scaled to the largest; zeros stay at the floor. */
export function sparkline(values: readonly number[]): string {
  const max = Math.max(0, ...values);
  if (max === 0) return ticks[0]!.repeat(values.length);
  return values.map((v) => ticks[Math.min(ticks.length - 1, Math.round((v / max) * (ticks.length - 1)))]).join('');
}

export const number = (n: number | null | undefined, digits = 1): string =>
  n === null || n === undefined ? '-' : Number.isInteger(n) ? String(n) : n.toFixed(digits);
