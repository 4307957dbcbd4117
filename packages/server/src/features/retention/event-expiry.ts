import { DAY_MS } from '../../lib/time.js';
import type { PartitionManager } from '../telemetry/index.js';
import type { RetentionStore } from './retention-store.js';

/**
 * How raw events leave the store: an engine adapter, picked by the composition root. SQLite
 * deletes rows organization by organization; PostgreSQL drops whole day partitions (a day goes
 * once all of it is past the cutoff, so events live up to a day longer) and creates the coming
 * days' partitions ahead of ingestion, so a batch rarely waits on DDL.
 */
export interface EventExpiry {
  prepareAhead(now: number): Promise<void>;
  expireBefore(cutoff: number, orgIds: readonly string[]): Promise<{ partitionsDropped: number; eventsDeleted: number }>;
}

const PARTITIONS_AHEAD_DAYS = 2;

export function createRowEventExpiry(store: Pick<RetentionStore, 'deleteEventsBefore'>): EventExpiry {
  return {
    prepareAhead: () => Promise.resolve(),
    async expireBefore(cutoff, orgIds) {
      let eventsDeleted = 0;
      for (const orgId of orgIds) eventsDeleted += await store.deleteEventsBefore(orgId, cutoff);
      return { partitionsDropped: 0, eventsDeleted };
    },
  };
}

export function createPartitionEventExpiry(partitions: PartitionManager, store: Pick<RetentionStore, 'deleteRequestIdsBefore'>): EventExpiry {
  return {
    prepareAhead: (now) => partitions.ensureDays(now, now + PARTITIONS_AHEAD_DAYS * DAY_MS),
    async expireBefore(cutoff) {
      const partitionsDropped = await partitions.dropBefore(cutoff);
      await store.deleteRequestIdsBefore(cutoff);
      return { partitionsDropped, eventsDeleted: 0 };
    },
  };
}
