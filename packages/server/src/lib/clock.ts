/** Injected wherever time matters, so tests can move it. Milliseconds since the epoch. */
export interface Clock {
  now(): number;
}
export const systemClock: Clock = { now: () => Date.now() };

/** Stored times are epoch milliseconds; the API speaks RFC 3339. */
export const toIso = (ms: number): string => new Date(ms).toISOString();
export const toIsoOrNull = (ms: number | null): string | null => (ms === null ? null : toIso(ms));
