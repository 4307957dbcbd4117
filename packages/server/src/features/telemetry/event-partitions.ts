import type pg from 'pg';
import { isDuplicateObject, translateStoreError } from '../../db/translate-error.js';
import { DAY_MS } from '../../lib/time.js';

const PARENT = 'telemetry_events';
const namePattern = /^telemetry_events_d(\d{4})(\d{2})(\d{2})$/;

/** `telemetry_events_d20250131` holds [that day 00:00 UTC, next day 00:00 UTC) of event time. */
export function partitionName(day: number): string {
  return `${PARENT}_d${new Date(day * DAY_MS).toISOString().slice(0, 10).replace(/-/g, '')}`;
}

function dayOfName(name: string): number | undefined {
  const m = namePattern.exec(name);
  return m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) / DAY_MS : undefined;
}

async function query<R extends pg.QueryResultRow>(pool: pg.Pool, text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
  try {
    return await pool.query<R>(text, values);
  } catch (err) {
    throw translateStoreError('postgres', err);
  }
}

/**
 * PostgreSQL's day partitions of raw events, an engine adapter: the PostgreSQL telemetry writer
 * makes sure a batch's days exist, and retention creates the coming days and drops old ones.
 */
export function createPartitionManager(pool: pg.Pool) {
  // Partitions are never dropped while they can still receive events (retention only drops
  // days older than the oldest accepted timestamp), so a process may remember what it made.
  const known = new Set<number>();

  async function create(day: number): Promise<void> {
    const name = partitionName(day);
    try {
      await pool.query(
        `CREATE TABLE IF NOT EXISTS ${name} PARTITION OF ${PARENT} FOR VALUES FROM (${day * DAY_MS}) TO (${(day + 1) * DAY_MS})`,
      );
    } catch (err) {
      // Another process created it between our check and our CREATE.
      if (!isDuplicateObject(err)) throw translateStoreError('postgres', err);
    }
    known.add(day);
  }

  async function list(): Promise<Array<{ name: string; day: number }>> {
    const result = await query<{ name: string }>(
      pool,
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass`,
      [PARENT],
    );
    return result.rows
      .map((r) => ({ name: r.name, day: dayOfName(r.name) }))
      .filter((p): p is { name: string; day: number } => p.day !== undefined)
      .sort((a, b) => a.day - b.day);
  }

  return {
    /** Makes sure every day that `timestamps` fall in has its partition. */
    async ensureFor(timestamps: Iterable<number>): Promise<void> {
      const days = new Set<number>();
      for (const ts of timestamps) {
        const day = Math.floor(ts / DAY_MS);
        if (!known.has(day)) days.add(day);
      }
      for (const day of days) await create(day);
    },

    async ensureDays(fromMs: number, toMs: number): Promise<void> {
      for (let day = Math.floor(fromMs / DAY_MS); day <= Math.floor(toMs / DAY_MS); day++) if (!known.has(day)) await create(day);
    },

    /** The partitions that exist, oldest first. */
    list,

    /** Drops the partitions whose whole day is before `cutoffMs`; answers how many. */
    async dropBefore(cutoffMs: number): Promise<number> {
      let dropped = 0;
      for (const p of await list()) {
        if ((p.day + 1) * DAY_MS > cutoffMs) break;
        await query(pool, `DROP TABLE IF EXISTS ${p.name}`);
        known.delete(p.day);
        dropped++;
      }
      return dropped;
    },
  };
}
export type PartitionManager = ReturnType<typeof createPartitionManager>;
