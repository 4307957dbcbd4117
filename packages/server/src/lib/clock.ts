/** Injected wherever time matters, so tests can move it. Milliseconds since the epoch. */
export interface Clock {
  now(): number;
}
export const systemClock: Clock = { now: () => Date.now() };

/** Stored times are epoch milliseconds; the API speaks RFC 3339. */
export const toIso = (ms: number): string => new Date(ms).toISOString();
export const toIsoOrNull = (ms: number | null): string | null => (ms === null ? null : toIso(ms));

/**
 * RFC 3339 text (already checked by the `date-time` format) → epoch milliseconds. The format
 * admits a leap second (`23:59:60`), which `Date.parse` turns into NaN; it is read as the first
 * instant of the next minute, which is what it precedes.
 */
export function parseTimestamp(text: string): number {
  const leap = /^(.*[T ]\d\d:\d\d:)60(.*)$/i.exec(text);
  const ms = leap ? Date.parse(`${leap[1]}59${leap[2]}`) + 1000 : Date.parse(text);
  if (Number.isNaN(ms)) throw new TypeError(`Not an RFC 3339 timestamp: ${text}`);
  return ms;
}
