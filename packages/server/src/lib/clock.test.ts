import { describe, expect, it } from 'vitest';
import { parseTimestamp } from './clock.js';

describe('parseTimestamp', () => {
  it('reads every RFC 3339 form the date-time format admits', () => {
    expect(parseTimestamp('2030-01-01T00:00:00Z')).toBe(Date.UTC(2030, 0, 1));
    expect(parseTimestamp('2030-01-01t01:00:00+01:00')).toBe(Date.UTC(2030, 0, 1));
    expect(parseTimestamp('2030-01-01 00:00:00.5z')).toBe(Date.UTC(2030, 0, 1) + 500);
  });

  it('reads a leap second as the start of the next minute instead of NaN', () => {
    expect(parseTimestamp('2030-06-30T23:59:60Z')).toBe(Date.UTC(2030, 6, 1));
    expect(parseTimestamp('2030-06-30 23:59:60.25Z')).toBe(Date.UTC(2030, 6, 1) + 250);
  });

  it('throws on text that is not a timestamp', () => {
    expect(() => parseTimestamp('tomorrow')).toThrow(TypeError);
  });
});
