import { MINUTE_MS, HOUR_MS, SECOND_MS } from '../../lib/time.js';

/**
 * When a failed notification is tried again, after attempt n (Svix's schedule): immediately
 * (the first attempt), then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h: eight attempts over
 * about 27 hours. Each wait is spread by ±20% so that the receivers of many notifications that
 * failed together (an outage) are not hit again all at once.
 */
export const RETRY_DELAYS_MS = [5 * SECOND_MS, 5 * MINUTE_MS, 30 * MINUTE_MS, 2 * HOUR_MS, 5 * HOUR_MS, 10 * HOUR_MS, 10 * HOUR_MS] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
export const JITTER = 0.2;
/** A receiver's Retry-After is honoured up to a day; past that it reads as a day. */
export const MAX_RETRY_AFTER_MS = 24 * HOUR_MS;

/** The wait after `attempts` failed attempts, or undefined when none is left. `random` is in [0, 1). */
export function retryDelay(attempts: number, retryAfterMs: number | undefined, random: number): number | undefined {
  const base = RETRY_DELAYS_MS[attempts - 1];
  if (base === undefined) return undefined;
  const scheduled = Math.round(base * (1 - JITTER + 2 * JITTER * random));
  // Not sooner than the receiver asked, nor sooner than the schedule.
  return Math.max(scheduled, Math.min(retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
}

/** `Retry-After` as seconds or an HTTP date (RFC 9110), in ms from `now`; undefined when absent or unreadable. */
export function parseRetryAfter(header: string | undefined, now: number): number | undefined {
  if (header === undefined) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * SECOND_MS;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
