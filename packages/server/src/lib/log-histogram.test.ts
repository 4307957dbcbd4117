import { describe, expect, it } from 'vitest';
import {
  accumulateSerialized, addValue, countOf, createDense, createHistogram, denseQuantiles, keyOf, mergeInto, mergeSerialized, parseHistogramInto,
  quantiles, serializeHistogram, valueOfKey,
} from './log-histogram.js';

/** Nearest-rank quantile of the exact values: the definition the histogram approximates. */
function exactQuantile(sorted: number[], q: number): number {
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1] ?? 0;
}

// A deterministic generator, so a failure can be reproduced.
function lcg(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

describe('log histogram', () => {
  it('answers every value within 1% of itself, and small integers exactly', () => {
    for (let v = 1; v <= 49; v++) expect(valueOfKey(keyOf(v))).toBe(v);
    for (const v of [0, 1, 7, 49, 51, 99, 1000, 12_345, 999_999, 86_400_000]) {
      const back = valueOfKey(keyOf(v));
      if (v === 0) expect(back).toBe(0);
      else expect(Math.abs(back - v) / v).toBeLessThanOrEqual(0.01);
    }
  });

  it('keeps percentiles of skewed data within 2% of the exact nearest-rank values', () => {
    const random = lcg(42);
    const values: number[] = [];
    const h = createHistogram();
    for (let i = 0; i < 50_000; i++) {
      // Log-normal-ish latencies from 1 ms to a few seconds, with a long tail.
      const v = Math.max(1, Math.round(Math.exp(3 + 1.5 * (random() + random() + random() - 1.5) * 2)));
      values.push(v);
      addValue(h, v);
    }
    values.sort((a, b) => a - b);
    const qs = [0.5, 0.9, 0.95, 0.99, 0.999];
    const got = quantiles(h, qs);
    qs.forEach((q, i) => {
      const exact = exactQuantile(values, q);
      expect(Math.abs((got[i] ?? 0) - exact) / exact).toBeLessThanOrEqual(0.02);
    });
  });

  it('merges bin by bin: parts merged equal the whole, also through the stored text', () => {
    const random = lcg(7);
    const whole = createHistogram();
    const parts = [createHistogram(), createHistogram(), createHistogram()];
    for (let i = 0; i < 3000; i++) {
      const v = Math.floor(random() * 5000);
      addValue(whole, v);
      addValue(parts[i % 3]!, v);
    }
    const merged = parts.reduce((acc, p) => mergeInto(acc, p), createHistogram());
    expect(countOf(merged)).toBe(3000);
    expect(quantiles(merged, [0.5, 0.99])).toEqual(quantiles(whole, [0.5, 0.99]));
    const viaText = mergeSerialized(serializeHistogram(parts[0]!), serializeHistogram(mergeInto(parts[1]!, parts[2]!)));
    expect(parseHistogramInto(createHistogram(), viaText)).toEqual(whole);
    const dense = createDense();
    // parts[1] now holds parts[2] too (merged above).
    for (const part of parts.slice(0, 2)) accumulateSerialized(dense, serializeHistogram(part));
    expect(denseQuantiles(dense, [0.5, 0.9, 0.99])).toEqual(quantiles(whole, [0.5, 0.9, 0.99]));
  });

  it('answers zero for an empty histogram and handles nulls in stored text', () => {
    expect(quantiles(createHistogram(), [0.5, 0.99])).toEqual([0, 0]);
    expect(denseQuantiles(createDense(), [0.5])).toEqual([0]);
    const dense = createDense();
    accumulateSerialized(dense, '{"3": 2, "41": 10}');
    accumulateSerialized(dense, '{"41":5,"7":1}');
    accumulateSerialized(dense, '{}');
    expect([dense[3], dense[7], dense[41]]).toEqual([2, 1, 15]);
    expect(mergeSerialized(null, '{"1":2}')).toBe('{"1":2}');
  });
});
