import type { Worker } from '../../container.js';
import type { Clock } from '../../lib/clock.js';
import { DAY_MS, type PartitionManager } from '../telemetry/index.js';
import type { RetentionStore } from './retention-store.js';

export interface RetentionResult {
  cutoff: number;
  partitionsDropped: number;
  eventsDeleted: number;
  rollupsDeleted: number;
}

interface Deps {
  retentionStore: RetentionStore;
  /** PostgreSQL's day partitions; undefined on SQLite. */
  partitions: PartitionManager | undefined;
  clock: Clock;
  retentionDays: number;
  intervalMs?: number;
  onError?: (err: unknown) => void;
}

const PARTITIONS_AHEAD_DAYS = 2;

/**
 * Drops raw events and rollups older than CORRAL_RETENTION_DAYS, hourly. On PostgreSQL it
 * drops whole day partitions (a day is dropped once all of it is past the cutoff, so events
 * live up to a day longer) and creates the coming days' partitions ahead of ingestion.
 */
export function createRetentionWorker({ retentionStore: store, partitions, clock, retentionDays, intervalMs = 3_600_000, onError }: Deps) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;

  async function runOnce(): Promise<RetentionResult> {
    const now = clock.now();
    const cutoff = now - retentionDays * DAY_MS;
    const result: RetentionResult = { cutoff, partitionsDropped: 0, eventsDeleted: 0, rollupsDeleted: 0 };
    if (partitions) {
      await partitions.ensureDays(now, now + PARTITIONS_AHEAD_DAYS * DAY_MS);
      result.partitionsDropped = await partitions.dropBefore(cutoff);
      await store.deleteRequestIdsBefore(cutoff);
    }
    for (const orgId of await store.orgIds()) {
      if (!partitions) result.eventsDeleted += await store.deleteEventsBefore(orgId, cutoff);
      result.rollupsDeleted += await store.deleteRollupsBefore(orgId, cutoff);
    }
    await store.deleteIdleRateLimits(now - DAY_MS);
    return result;
  }

  function tick(): void {
    if (running) return;
    running = runOnce()
      .catch((err: unknown) => onError?.(err))
      .finally(() => (running = undefined));
  }

  const worker: Worker & { runOnce(): Promise<RetentionResult>; partitions(): Promise<Array<{ name: string; day: number }>> } = {
    name: 'telemetry-retention',
    runOnce,
    /** The raw-event partitions that exist (PostgreSQL; none on SQLite). */
    partitions: async () => (partitions ? partitions.list() : []),
    start() {
      tick();
      timer = setInterval(tick, intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await running;
    },
  };
  return worker;
}
export type RetentionWorker = ReturnType<typeof createRetentionWorker>;
