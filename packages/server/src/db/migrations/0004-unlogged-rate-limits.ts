import { sql, type Kysely, type Migration } from 'kysely';
import type { DialectName } from '../dialect/types.js';

/**
 * Every telemetry request of an organization updates its one rate-limit row, and a row lock is
 * held until commit; a logged commit waits for the WAL flush, so each waited for the previous
 * one's flush and a slow disk flush stalled every ingest request behind it. The state is
 * worth nothing after a server crash (an emptied table means full quotas again), so on
 * PostgreSQL it is UNLOGGED: its commits write no WAL to wait for. SQLite keeps it in memory.
 */
export const unloggedRateLimits = (dialect: DialectName): Migration => ({
  async up(db: Kysely<unknown>) {
    if (dialect === 'postgres') await sql`ALTER TABLE rate_limit_state SET UNLOGGED`.execute(db);
  },
});
