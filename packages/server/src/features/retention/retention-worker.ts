import type { Clock } from '../../lib/clock.js';
import type { Worker } from '../../lib/lifecycle.js';
import type { Logger } from '../../lib/logger.js';
import { DAY_MS, HOUR_MS } from '../../lib/time.js';
import type { EventExpiry } from './event-expiry.js';
import type { RetentionStore } from './retention-store.js';

export interface RetentionResult {
  cutoff: number;
  partitionsDropped: number;
  eventsDeleted: number;
  rollupsDeleted: number;
  instancesDeleted: number;
}

/** An SDK instance silent this long (a stopped process reports every 30 s while alive) is forgotten. */
export const INSTANCE_IDLE_MS = 7 * DAY_MS;

interface Deps {
  retentionStore: RetentionStore;
  eventExpiry: EventExpiry;
  clock: Clock;
  retentionDays: number;
  log: Logger;
  intervalMs?: number;
}

/**
 * Drops raw events and rollups older than CORRAL_RETENTION_DAYS, and SDK instances silent for
 * a week: once at start, then hourly.
 */
export function createRetentionWorker({ retentionStore: store, eventExpiry, clock, retentionDays, log, intervalMs = HOUR_MS }: Deps) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;

  async function runOnce(): Promise<RetentionResult> {
    const now = clock.now();
    const cutoff = now - retentionDays * DAY_MS;
    await eventExpiry.prepareAhead(now);
    const orgIds = await store.orgIds();
    const expired = await eventExpiry.expireBefore(cutoff, orgIds);
    let rollupsDeleted = 0;
    for (const orgId of orgIds) rollupsDeleted += await store.deleteRollupsBefore(orgId, cutoff);
    await store.deleteIdleRateLimits(now - DAY_MS);
    const instancesDeleted = await store.deleteIdleInstances(now - INSTANCE_IDLE_MS);
    return { cutoff, ...expired, rollupsDeleted, instancesDeleted };
  }

  function tick(): void {
    if (running) return;
    running = runOnce()
      .catch((err: unknown) => log.error({ err, worker: 'telemetry-retention' }, 'retention run failed; the next run retries'))
      .finally(() => (running = undefined));
  }

  return {
    name: 'telemetry-retention',
    kind: 'job',
    runOnce,
    async start() {
      tick();
      timer = setInterval(tick, intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await running;
    },
  } satisfies Worker & { runOnce(): Promise<RetentionResult> };
}
export type RetentionWorker = ReturnType<typeof createRetentionWorker>;
