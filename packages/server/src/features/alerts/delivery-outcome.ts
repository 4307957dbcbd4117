/** What one delivery attempt came to, on either channel. */
export interface DeliveryOutcome {
  readonly ok: boolean;
  /** The receiver's HTTP status (webhooks), or null when none came back. */
  readonly httpStatus: number | null;
  /** Why it failed, for people; null when delivered. */
  readonly error: string | null;
  /** The receiver's Retry-After, in ms. */
  readonly retryAfterMs?: number | undefined;
}

export const failed = (error: string, httpStatus: number | null = null, retryAfterMs?: number): DeliveryOutcome => ({ ok: false, httpStatus, error, retryAfterMs });

/** Printable text of at most `max` characters: error messages end up in API responses and logs. */
export function excerpt(text: string, max = 200): string {
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}
