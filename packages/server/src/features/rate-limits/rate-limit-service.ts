import type { Plan } from '@corral/contracts';
import { RateLimitedError } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import type { RateLimitStore } from './rate-limit-store.js';

export const RATE_WINDOW_MS = 60_000;

export interface RateLimitDecision {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  /** Seconds until the full quota is back. */
  readonly resetSeconds: number;
  /** Seconds to wait before this batch would fit (refused decisions only). */
  readonly retryAfterSeconds: number;
}

interface Deps {
  store: RateLimitStore;
  planOf: (orgId: string) => Promise<Plan>;
  /** Events per minute per organization, by plan (contract section 5). */
  limits: Readonly<Record<Plan, number>>;
  clock: Clock;
}

/**
 * Events per minute per organization as a generic cell rate algorithm (GCRA): each event
 * costs 60 s / limit of "time"; a batch is allowed when the state it leaves behind is at most
 * one minute ahead of now. That is a sliding window with a full minute of burst and no
 * boundary doubling, kept as one number per organization.
 */
export function createRateLimiter({ store, planOf, limits, clock }: Deps) {
  function decide(limit: number, now: number, tat: number | undefined, allowed: boolean, retryAfterSeconds = 0): RateLimitDecision {
    const interval = RATE_WINDOW_MS / limit;
    const ahead = Math.max(0, (tat ?? now) - now);
    const remaining = Math.min(limit, Math.max(0, Math.floor((RATE_WINDOW_MS - ahead) / interval + 1e-9)));
    return { allowed, limit, remaining, resetSeconds: Math.ceil(ahead / 1000), retryAfterSeconds };
  }

  return {
    /** Takes `events` from the organization's quota, all or nothing. */
    async take(orgId: string, events: number): Promise<RateLimitDecision> {
      const limit = limits[await planOf(orgId)];
      const interval = RATE_WINDOW_MS / limit;
      const now = clock.now();
      if (events > limit) return decide(limit, now, await store.peek(orgId), false, RATE_WINDOW_MS / 1000);
      const tat = await store.take(orgId, now, events * interval, RATE_WINDOW_MS);
      if (tat !== undefined) return decide(limit, now, tat, true);
      const current = (await store.peek(orgId)) ?? now;
      const wait = Math.max(current, now) + events * interval - now - RATE_WINDOW_MS;
      return decide(limit, now, current, false, Math.max(1, Math.ceil(wait / 1000)));
    },

    /** The state without taking anything, for responses refused before the limit stage. */
    async peek(orgId: string): Promise<RateLimitDecision> {
      const limit = limits[await planOf(orgId)];
      return decide(limit, clock.now(), await store.peek(orgId), true);
    },

    /** Gives back what a batch took when it was refused later (validation, signature, agents). */
    async refund(orgId: string, events: number): Promise<void> {
      const limit = limits[await planOf(orgId)];
      await store.refund(orgId, events * (RATE_WINDOW_MS / limit));
    },
  };
}
export type RateLimiter = ReturnType<typeof createRateLimiter>;

/** The IETF RateLimit header fields, sent on every telemetry response. */
export function rateLimitHeaders(d: RateLimitDecision): Record<string, string> {
  return {
    'ratelimit-limit': String(d.limit),
    'ratelimit-remaining': String(d.remaining),
    'ratelimit-reset': String(d.resetSeconds),
    'ratelimit-policy': `${d.limit};w=${RATE_WINDOW_MS / 1000}`,
  };
}

export function rateLimitError(d: RateLimitDecision, events: number): RateLimitedError {
  const message = events > d.limit
    ? `A batch of ${events} events can never fit the limit of ${d.limit} events per minute; send smaller batches`
    : `Rate limit of ${d.limit} events per minute exceeded; retry in ${d.retryAfterSeconds} s`;
  return new RateLimitedError(message, d.retryAfterSeconds);
}
