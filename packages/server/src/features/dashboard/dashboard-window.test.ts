import { describe, expect, it } from 'vitest';
import { chooseWidth, grainFor, resolveWindow, splitWindow } from './dashboard-window.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

describe('dashboard windows', () => {
  it('defaults to the 24 hours before now, in whole minutes, and refuses more than 31 days', () => {
    const now = Date.UTC(2025, 0, 10, 12, 30, 15);
    expect(resolveWindow(undefined, undefined, now)).toEqual({ from: Date.UTC(2025, 0, 9, 12, 30), to: Date.UTC(2025, 0, 10, 12, 31) });
    expect(() => resolveWindow('2025-01-01T00:00:00Z', '2025-02-01T00:00:01Z', now)).toThrow(/31 days/);
    expect(resolveWindow('2025-01-01T00:00:00Z', '2025-02-01T00:00:00Z', now).to).toBe(Date.UTC(2025, 1, 1));
    expect(() => resolveWindow('2025-01-02T00:00:00Z', '2025-01-01T00:00:00Z', now)).toThrow(/before/);
  });

  it('covers a window exactly with the coarsest rollup ranges', () => {
    const from = Date.UTC(2025, 0, 1, 22, 17);
    const to = Date.UTC(2025, 0, 31, 3, 44);
    const ranges = splitWindow({ from, to });
    expect(ranges.map((r) => r.grain)).toEqual([MIN, HOUR, DAY, HOUR, MIN]);
    expect(ranges[0]).toEqual({ grain: MIN, from, to: Date.UTC(2025, 0, 1, 23) });
    expect(ranges[2]).toEqual({ grain: DAY, from: Date.UTC(2025, 0, 2), to: Date.UTC(2025, 0, 31) });
    expect(ranges[ranges.length - 1]!.to).toBe(to);
    ranges.forEach((r, i) => i > 0 && expect(r.from).toBe(ranges[i - 1]!.to));
    expect(splitWindow({ from, to }, HOUR).map((r) => r.grain)).toEqual([MIN, HOUR, MIN]);
  });

  it('picks the narrowest contract width giving at most 120 buckets', () => {
    const at = Date.UTC(2025, 0, 1);
    const width = (span: number) => chooseWidth({ from: at, to: at + span });
    expect(width(10 * MIN)).toBe(MIN);
    expect(width(HOUR)).toBe(MIN);
    expect(width(24 * HOUR)).toBe(15 * MIN);
    expect(width(7 * DAY)).toBe(3 * HOUR);
    expect(width(30 * DAY)).toBe(6 * HOUR);
    expect(width(31 * DAY)).toBe(12 * HOUR);
    expect([grainFor(15 * MIN), grainFor(3 * HOUR), grainFor(DAY)]).toEqual([MIN, HOUR, DAY]);
  });
});
