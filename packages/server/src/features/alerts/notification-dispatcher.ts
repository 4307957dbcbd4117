import type { WebhookPayload } from '@corral/contracts';
import type { Store } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { forEachLimited } from '../../lib/concurrency.js';
import { newId } from '../../lib/ids.js';
import type { Worker } from '../../lib/lifecycle.js';
import type { Logger } from '../../lib/logger.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { MINUTE_MS, SECOND_MS } from '../../lib/time.js';
import type { AlertStore } from './alert-store.js';
import { type DeliveryOutcome, excerpt, failed } from './delivery-outcome.js';
import type { EmailSender } from './email-sender.js';
import { renderEmail } from './notification-content.js';
import type { NotificationRow, NotificationStore } from './notification-store.js';
import { retryDelay } from './retry-schedule.js';
import type { WebhookSender } from './webhook-sender.js';
import { signingSecretsOf } from './webhook-secrets.js';

/*
 * The dispatcher delivers the outbox (docs/alerts.md, "Delivery"):
 *   claim due rows (a lease, so a crashed dispatcher's rows come back) → attempt each →
 *   record the attempt and the row's next state in one transaction, if the claim is still ours.
 * It polls every second and is woken at once by the evaluator, so a new notification leaves
 * within moments. Delivery is at least once: a crash between a receiver's answer and its record
 * sends that attempt again, with the same webhook-id for the receiver to drop.
 */

/** How long a claim holds: longer than any attempt (10 s timeouts per step). */
export const CLAIM_LEASE_MS = 2 * MINUTE_MS;
const POLL_MS = SECOND_MS;
const BATCH = 50;
const CONCURRENCY = 8;

interface Deps {
  db: Pick<Store, 'kysely'>;
  notificationStore: NotificationStore;
  alertStore: Pick<AlertStore, 'get' | 'countDelivered'>;
  webhookSender: Pick<WebhookSender, 'send'>;
  emailSender: Pick<EmailSender, 'send'>;
  secretBox: SecretBox;
  clock: Clock;
  log: Logger;
  /** In [0, 1): spreads retries (retry-schedule.ts); tests pin it. */
  random?: () => number;
  pollMs?: number;
  /** Told of every recorded attempt's outcome (metrics). */
  onAttempt?: (status: 'delivered' | 'retrying' | 'failed') => void;
}

export function createNotificationDispatcher({
  db, notificationStore: store, alertStore, webhookSender, emailSender, secretBox, clock, log, random = Math.random, pollMs = POLL_MS, onAttempt,
}: Deps) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let again = false;
  // `started`: the worker's timers run; `stopping`: a stop is under way, so loops end early.
  let started = false;
  let stopping = false;

  async function deliver(row: NotificationRow): Promise<DeliveryOutcome> {
    if (row.channel === 'email') return emailSender.send({ to: row.recipient, id: row.id, ...renderEmail(JSON.parse(row.payload) as WebhookPayload) });
    const rule = await alertStore.get(row.org_id, row.alert_id);
    if (!rule) return failed('the alert rule no longer exists');
    const secrets = signingSecretsOf(rule, secretBox, clock.now());
    if (secrets.length === 0) return failed('the rule has no webhook signing secret (its channel is no longer webhook)');
    // The receiver checks the timestamp against its own clock: it is the wall-clock send time.
    return webhookSender.send({ url: row.recipient, id: row.id, body: row.payload, secrets, timestampSeconds: Math.floor(Date.now() / 1000) });
  }

  /**
   * One attempt on a row this dispatcher has claimed. `final` (test notifications): no retry.
   * Answers the row as recorded, or undefined when the claim was lost meanwhile.
   */
  async function attemptClaimed(row: NotificationRow, claimId: string, final = false): Promise<NotificationRow | undefined> {
    const began = performance.now();
    const outcome = await deliver(row).catch((err: unknown) => failed(excerpt(err instanceof Error ? err.message : String(err))));
    const durationMs = Math.round(performance.now() - began);
    const now = clock.now();
    const attempt = row.attempts + 1;
    const delay = outcome.ok || final ? undefined : retryDelay(attempt, outcome.retryAfterMs, random());
    const status = outcome.ok ? 'delivered' : delay === undefined ? 'failed' : 'retrying';
    const changes = {
      status, attempts: attempt, last_error: outcome.error, updated_at: now,
      next_attempt_at: delay === undefined ? null : now + delay,
      delivered_at: outcome.ok ? now : null,
    };
    const owned = await db.kysely.transaction().execute(async (trx) => {
      if (!(await store.finish(trx, row.org_id, row.id, claimId, changes))) return false;
      await store.insertAttempt(trx, {
        org_id: row.org_id, notification_id: row.id, attempt, status, http_status: outcome.httpStatus, error: outcome.error,
        duration_ms: durationMs, created_at: now,
      });
      if (outcome.ok && row.kind !== 'test') await alertStore.countDelivered(trx, row.org_id, row.alert_id);
      return true;
    });
    if (!owned) {
      log.warn({ worker: 'alert-dispatcher', notification: row.id, attempt }, 'a notification claim lapsed during its attempt; the attempt is not recorded');
      return undefined;
    }
    onAttempt?.(status);
    if (!outcome.ok) log.info({ worker: 'alert-dispatcher', notification: row.id, attempt, status, error: outcome.error }, 'notification attempt failed');
    return { ...row, ...changes, claim_id: null, claimed_until: null };
  }

  /** Delivers every due notification; answers how many attempts it made. */
  async function runOnce(): Promise<number> {
    let attempts = 0;
    for (;;) {
      const now = clock.now();
      const claimId = newId();
      const rows = await store.claimDue(now, now + CLAIM_LEASE_MS, claimId, BATCH);
      await forEachLimited(rows, CONCURRENCY, async (row) => void (await attemptClaimed(row, claimId)));
      attempts += rows.length;
      if (rows.length < BATCH || stopping) return attempts;
    }
  }

  function tick(): void {
    if (running) {
      again = true;
      return;
    }
    running = runOnce()
      .catch((err: unknown) => log.error({ err, worker: 'alert-dispatcher' }, 'notification dispatch failed; the next poll retries'))
      .finally(() => {
        running = undefined;
        if (again && started) {
          again = false;
          tick();
        }
      });
  }

  return {
    name: 'alert-dispatcher',
    kind: 'job',
    runOnce,
    attemptClaimed,
    /** Starts a dispatch now (the evaluator queued something); a no-op where the worker is not running. */
    wake(): void {
      if (started) tick();
    },
    async start() {
      started = true;
      stopping = false;
      tick();
      timer = setInterval(tick, pollMs);
      timer.unref();
    },
    async stop() {
      started = false;
      stopping = true;
      if (timer) clearInterval(timer);
      timer = undefined;
      await running;
      stopping = false;
    },
  } satisfies Worker & Record<string, unknown>;
}
export type NotificationDispatcher = ReturnType<typeof createNotificationDispatcher>;
