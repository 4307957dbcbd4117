import { describe, expect, it } from 'vitest';
import { MAX_ATTEMPTS, parseRetryAfter, retryDelay } from './retry-schedule.js';

describe('retry schedule', () => {
  it('waits 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, spread by ±20%, then stops', () => {
    const minutes = (ms: number | undefined) => (ms ?? NaN) / 60_000;
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => retryDelay(n, undefined, 0.5))).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    expect(minutes(retryDelay(2, undefined, 0))).toBe(4);
    expect(minutes(retryDelay(2, undefined, 0.999999))).toBeCloseTo(6, 3);
    expect(retryDelay(MAX_ATTEMPTS, undefined, 0.5)).toBeUndefined();
    expect(MAX_ATTEMPTS).toBe(8);
  });

  it('never retries sooner than Retry-After asks, up to a day', () => {
    expect(retryDelay(1, 60_000, 0.5)).toBe(60_000);
    expect(retryDelay(2, 60_000, 0.5)).toBe(300_000);
    expect(retryDelay(1, 7 * 86_400_000, 0.5)).toBe(86_400_000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('30', now)).toBe(30_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
