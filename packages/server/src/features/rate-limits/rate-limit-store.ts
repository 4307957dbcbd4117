import { sql } from 'kysely';
import type { Store } from '../../db/database.js';

/**
 * Where the GCRA state lives: the theoretical arrival time (`tat`, fractional epoch ms) per
 * organization. `take` advances it by `cost` only if the result stays within `horizon` of now;
 * it answers the new tat when allowed, or undefined when refused.
 */
export interface RateLimitStore {
  take(orgId: string, now: number, cost: number, horizon: number): Promise<number | undefined>;
  peek(orgId: string): Promise<number | undefined>;
  refund(orgId: string, cost: number): Promise<void>;
}

/** Embedded shape: one process, so the state is a map. Entries in the past mean "full quota". */
export function createMemoryRateLimitStore(): RateLimitStore {
  const tats = new Map<string, number>();
  const prune = (now: number) => {
    if (tats.size < 10_000) return;
    for (const [org, tat] of tats) if (tat <= now) tats.delete(org);
  };
  return {
    async take(orgId, now, cost, horizon) {
      const next = Math.max(tats.get(orgId) ?? now, now) + cost;
      if (next > now + horizon) return undefined;
      prune(now);
      tats.set(orgId, next);
      return next;
    },
    async peek(orgId) {
      return tats.get(orgId);
    },
    async refund(orgId, cost) {
      const tat = tats.get(orgId);
      if (tat !== undefined) tats.set(orgId, tat - cost);
    },
  };
}

/**
 * Shared shape: every process on the same PostgreSQL reads and advances one row per
 * organization in a single conditional upsert, so the row lock makes check-and-take atomic
 * across processes.
 */
export function createPostgresRateLimitStore({ kysely: k }: Pick<Store, 'kysely'>): RateLimitStore {
  return {
    async take(orgId, now, cost, horizon) {
      const result = await sql<{ tat: number }>`
        INSERT INTO rate_limit_state (org_id, tat) VALUES (${orgId}, ${now + cost})
        ON CONFLICT (org_id) DO UPDATE SET tat = GREATEST(rate_limit_state.tat, ${now}::float8) + ${cost}::float8
        WHERE GREATEST(rate_limit_state.tat, ${now}::float8) + ${cost}::float8 <= ${now + horizon}::float8
        RETURNING tat`.execute(k);
      return result.rows[0]?.tat;
    },
    async peek(orgId) {
      const row = await k.selectFrom('rate_limit_state').select('tat').where('org_id', '=', orgId).executeTakeFirst();
      return row?.tat;
    },
    async refund(orgId, cost) {
      await sql`UPDATE rate_limit_state SET tat = tat - ${cost}::float8 WHERE org_id = ${orgId}`.execute(k);
    },
  };
}
