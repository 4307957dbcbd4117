/**
 * A mergeable latency histogram with logarithmic bins (the DDSketch idea): bin i holds the
 * values in (γ^(i-1), γ^i] with γ = (1+α)/(1-α), so answering with the bin's log-midpoint is
 * within α of any value in it. α = 1% keeps every quantile within 1% of the exact value,
 * which leaves room under the 2% the dashboard promises. Merging is adding counts bin by bin,
 * so per-minute histograms fold into hours, days and windows without losing accuracy.
 *
 * Latencies are whole milliseconds. Key 0 holds zero; key i+1 holds bin i (values ≥ 1).
 * Bins that hold a single integer answer that integer, so small latencies come back exact.
 */
export const RELATIVE_ACCURACY = 0.01;
const gamma = (1 + RELATIVE_ACCURACY) / (1 - RELATIVE_ACCURACY);
const logGamma = Math.log(gamma);

export type LogHistogram = Map<number, number>;

export const createHistogram = (): LogHistogram => new Map();

export function keyOf(value: number): number {
  if (value <= 0) return 0;
  // The epsilon keeps exact powers of γ in their own bin despite floating-point noise.
  return Math.max(0, Math.ceil(Math.log(value) / logGamma - 1e-9)) + 1;
}

/** The value a key stands for. */
export function valueOfKey(key: number): number {
  if (key <= 0) return 0;
  const upper = Math.pow(gamma, key - 1);
  const lower = upper / gamma;
  const firstInt = Math.floor(lower + 1e-9) + 1;
  if (firstInt === Math.floor(upper + 1e-9)) return firstInt;
  return (2 * upper) / (gamma + 1);
}

export function addValue(h: LogHistogram, value: number, count = 1): void {
  const key = keyOf(value);
  h.set(key, (h.get(key) ?? 0) + count);
}

export function mergeInto(into: LogHistogram, from: LogHistogram): LogHistogram {
  for (const [key, count] of from) into.set(key, (into.get(key) ?? 0) + count);
  return into;
}

export function countOf(h: LogHistogram): number {
  let n = 0;
  for (const c of h.values()) n += c;
  return n;
}

/**
 * Nearest-rank quantiles (the value at rank ⌈q·n⌉), several at once so the bins are sorted
 * once. An empty histogram answers 0 for every quantile.
 */
export function quantiles(h: LogHistogram, qs: readonly number[]): number[] {
  const total = countOf(h);
  if (total === 0) return qs.map(() => 0);
  const keys = [...h.keys()].sort((a, b) => a - b);
  return qs.map((q) => {
    const rank = Math.max(1, Math.ceil(q * total));
    let seen = 0;
    for (const key of keys) {
      seen += h.get(key) ?? 0;
      if (seen >= rank) return valueOfKey(key);
    }
    return valueOfKey(keys[keys.length - 1] ?? 0);
  });
}

/**
 * Reads add many stored histograms together; a dense array indexed by key is several times
 * faster than a Map for that. Keys stay below 2,048 for any latency up to 2^53 ms.
 */
export const DENSE_KEYS = 2048;
export const createDense = (): Float64Array => new Float64Array(DENSE_KEYS);

/**
 * Adds a stored histogram into a dense array without building objects: a 30-day read adds up
 * hundreds of thousands of bins, and scanning the digits is several times faster than
 * JSON.parse plus property iteration. Accepts both `{"1":2}` and PostgreSQL's `{"1": 2}`.
 */
export function accumulateSerialized(into: Float64Array, text: string | null | undefined): void {
  if (!text) return;
  const n = text.length;
  let i = 0;
  let c = 0;
  while (i < n) {
    while (i < n && text.charCodeAt(i) !== 34) i++;
    if (++i >= n) return;
    let key = 0;
    while (i < n && (c = text.charCodeAt(i)) !== 34) {
      key = key * 10 + (c - 48);
      i++;
    }
    i++;
    while (i < n && ((c = text.charCodeAt(i)) < 48 || c > 57)) i++;
    let count = 0;
    while (i < n && (c = text.charCodeAt(i)) >= 48 && c <= 57) {
      count = count * 10 + (c - 48);
      i++;
    }
    if (key < DENSE_KEYS) into[key] = (into[key] ?? 0) + count;
  }
}

/** Nearest-rank quantiles of a dense histogram, as `quantiles` does for a Map. */
export function denseQuantiles(counts: Float64Array, qs: readonly number[]): number[] {
  let total = 0;
  for (const c of counts) total += c;
  if (total === 0) return qs.map(() => 0);
  return qs.map((q) => {
    const rank = Math.max(1, Math.ceil(q * total));
    let seen = 0;
    for (let key = 0; key < counts.length; key++) {
      seen += counts[key] ?? 0;
      if (seen >= rank) return valueOfKey(key);
    }
    return 0;
  });
}

/** Stored as a JSON object `{"key": count}` so both engines can merge it in SQL. */
export function serializeHistogram(h: LogHistogram): string {
  let out = '{';
  let first = true;
  for (const [key, count] of h) {
    if (count === 0) continue;
    out += `${first ? '' : ','}"${key}":${count}`;
    first = false;
  }
  return `${out}}`;
}

export function parseHistogramInto(into: LogHistogram, text: string | null | undefined): LogHistogram {
  if (!text) return into;
  const parsed = JSON.parse(text) as Record<string, number>;
  for (const key in parsed) {
    const k = Number(key);
    into.set(k, (into.get(k) ?? 0) + Number(parsed[key]));
  }
  return into;
}

/**
 * Merges two serialized histograms; the SQLite side of the SQL function `corral_hist_merge`.
 * It runs inside every rollup upsert, so it stays on plain objects: integer keys keep V8's
 * fast element storage and JSON.stringify writes them in ascending order.
 */
export function mergeSerialized(a: string | null, b: string | null): string {
  const into = (a ? JSON.parse(a) : {}) as Record<string, number>;
  if (b) {
    const from = JSON.parse(b) as Record<string, number>;
    for (const key in from) into[key] = (into[key] ?? 0) + (from[key] ?? 0);
  }
  return JSON.stringify(into);
}
