import { ValidationError } from '../../errors.js';
import { ROLLUP_GRAINS } from '../../db/schema.js';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../lib/time.js';

export const MAX_WINDOW_MS = 31 * DAY_MS;
const DEFAULT_SPAN_MS = DAY_MS;

/** A range of one rollup grain: buckets with from ≤ bucket_start < to. */
export interface RollupRange {
  grain: number;
  from: number;
  to: number;
}

export interface Window {
  /** Minute-aligned [from, to): the minute holding `to` counts, so "now" includes this minute. */
  from: number;
  to: number;
}

/** `to` defaults to now, `from` to 24 hours before `to`; at most 31 days (interface 4.5). */
export function resolveWindow(fromIso: string | undefined, toIso: string | undefined, now: number): Window {
  const to = toIso === undefined ? now : Date.parse(toIso);
  const from = fromIso === undefined ? to - DEFAULT_SPAN_MS : Date.parse(fromIso);
  if (from >= to) throw new ValidationError('from must be before to', [{ field: 'from', message: 'must be before to' }]);
  if (to - from > MAX_WINDOW_MS) {
    throw new ValidationError('The time window may not exceed 31 days', [{ field: 'from', message: 'must be at most 31 days before to' }]);
  }
  return { from: Math.floor(from / MINUTE_MS) * MINUTE_MS, to: Math.ceil(to / MINUTE_MS) * MINUTE_MS };
}

/**
 * Splits a minute-aligned window into rollup ranges, coarsest grain that fits at each step:
 * minutes up to the first whole hour, hours up to the first whole day, days, then back down.
 * A 31-day window reads about 30 day rows, 46 hour rows and 118 minute rows per series.
 */
export function splitWindow(w: Window, maxGrain: number = DAY_MS): RollupRange[] {
  const grains = ROLLUP_GRAINS.filter((g) => g <= maxGrain).reverse();
  const ranges: RollupRange[] = [];
  for (let at = w.from; at < w.to;) {
    const grain = grains.find((g) => at % g === 0 && at + g <= w.to) ?? MINUTE_MS;
    const last = ranges[ranges.length - 1];
    if (last && last.grain === grain && last.to === at) last.to = at + grain;
    else ranges.push({ grain, from: at, to: at + grain });
    at += grain;
  }
  return ranges;
}

const WIDTHS = [1, 5, 15, 30, 60, 180, 360, 720, 1440].map((m) => m * MINUTE_MS);
const MAX_BUCKETS = 120;

/** The narrowest width (contract section 8) that returns at most 120 buckets; 31 days → 12 h. */
export function chooseWidth(w: Window): number {
  return WIDTHS.find((width) => Math.ceil(w.to / width) - Math.floor(w.from / width) <= MAX_BUCKETS) ?? DAY_MS;
}

/** The largest grain that tiles buckets of `width`, so every rollup row falls in one bucket. */
export const grainFor = (width: number): number => (width % DAY_MS === 0 ? DAY_MS : width % HOUR_MS === 0 ? HOUR_MS : MINUTE_MS);
