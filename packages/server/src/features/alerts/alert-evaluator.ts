import type { AlertAction, AlertConditionType } from '@corral/contracts';
import type { Transaction } from 'kysely';
import type { Store } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { forEachLimited } from '../../lib/concurrency.js';
import { newId } from '../../lib/ids.js';
import type { Worker } from '../../lib/lifecycle.js';
import type { Logger } from '../../lib/logger.js';
import { MINUTE_MS, SECOND_MS } from '../../lib/time.js';
import type { AgentService } from '../agents/index.js';
import type { AgentWindowStats } from '../dashboard/index.js';
import { conditionValue, describeCondition, isBreaching, needsPreviousWindow } from './alert-conditions.js';
import type { AlertRuleRow, AlertRuleView, AlertStore } from './alert-store.js';
import { buildPayload } from './notification-content.js';
import type { NotificationStore } from './notification-store.js';

/*
 * The evaluator (docs/alerts.md, "Evaluation"), once a minute:
 *   claim the rules due at this minute's slot (each rule once, across processes) →
 *   read each rule's value over its window from the rollups →
 *   in one transaction per rule: record a firing/resolved transition if the state changes,
 *   its notification in the outbox (unless muted or cooling down) and its kill_switch action.
 * The stored state is the rule's memory: an evaluation that runs late, twice, or after a
 * restart compares against it, so one transition is recorded once.
 */

export const EVALUATION_INTERVAL_MS = MINUTE_MS;
/**
 * Evaluations run this long after each minute ends, over whole minutes up to that boundary, so
 * events still on their way from SDK batches (sent every few seconds) are counted.
 */
export const SETTLE_MS = 10 * SECOND_MS;
const BATCH = 200;
const CONCURRENCY = 4;

/** The minute boundary the evaluation at `now` covers up to. */
export const slotOf = (now: number): number => Math.floor((now - SETTLE_MS) / MINUTE_MS) * MINUTE_MS;

export interface EvaluationResult {
  slot: number;
  evaluated: number;
  transitions: number;
}

interface Deps {
  db: Pick<Store, 'kysely'>;
  alertStore: AlertStore;
  notificationStore: Pick<NotificationStore, 'insert'>;
  windowStats: AgentWindowStats;
  agentService: Pick<AgentService, 'engageKillSwitchWithin'>;
  clock: Clock;
  log: Logger;
  publicUrl: string;
  /** Told after a commit that queued a notification (the dispatcher's wake). */
  onQueued?: () => void;
  /** Told after each scheduled round: how many ms after its slot became due it finished (metrics). */
  onRound?: (lagMs: number) => void;
}

interface Reading {
  value: number;
  breaching: boolean;
  window: { from: number; to: number };
}

/** The fields a value depends on: if a person changed one since the claim, this round is skipped. */
const sameCondition = (a: AlertRuleRow, b: AlertRuleRow) =>
  a.agent_id === b.agent_id && a.condition_type === b.condition_type && a.threshold === b.threshold && a.window_minutes === b.window_minutes;

export function createAlertEvaluator({ db, alertStore, notificationStore, windowStats, agentService, clock, log, publicUrl, onQueued = () => undefined, onRound }: Deps) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  // `started`: the worker's timers run; `stopping`: a stop is under way, so loops end early.
  let started = false;
  let stopping = false;

  async function read(rule: AlertRuleView, slot: number): Promise<Reading> {
    const type = rule.condition_type as AlertConditionType;
    const span = rule.window_minutes * MINUTE_MS;
    const window = { from: slot - span, to: slot };
    const windows = needsPreviousWindow(type) ? [window, { from: slot - 2 * span, to: slot - span }] : [window];
    const [current, previous] = await windowStats.windows(rule.org_id, rule.agent_id, windows);
    const value = conditionValue(type, current ?? { total: 0, allowed: 0, denied: 0, error: 0, p99LatencyMs: 0 }, previous);
    return { value, breaching: isBreaching(value, rule.threshold), window };
  }

  async function apply(trx: Transaction<Database>, rule: AlertRuleView, r: Reading): Promise<{ transition: boolean; queued: boolean; announce?: () => void }> {
    const current = await alertStore.getForUpdate(trx, rule.org_id, rule.id);
    if (!current || current.is_enabled !== 1 || !sameCondition(current, rule)) return { transition: false, queued: false };
    const now = clock.now();
    const state = r.breaching ? 'firing' : 'ok';
    if (state === current.state) {
      await alertStore.update(trx, rule.org_id, rule.id, { last_value: r.value, last_evaluated_at: now });
      return { transition: false, queued: false };
    }
    const kind = r.breaching ? 'firing' : 'resolved';
    const muted = current.muted_until !== null && current.muted_until > now;
    const coolingDown = current.last_notified_at !== null && now - current.last_notified_at < current.cooldown_minutes * MINUTE_MS;
    const notification = muted ? 'muted' : coolingDown ? 'cooldown' : 'queued';
    const type = current.condition_type as AlertConditionType;
    const historyId = newId();

    let engaged: { announce: () => void } | undefined;
    if (kind === 'firing' && current.action === 'kill_switch') {
      engaged = await agentService.engageKillSwitchWithin(trx, rule.org_id, { type: 'alert', id: rule.id }, rule.agent_id,
        `alert ${rule.id}: ${describeCondition(type, r.value, current.threshold, current.window_minutes, true)}`);
    }
    await alertStore.insertHistory(trx, {
      org_id: rule.org_id, id: historyId, alert_id: rule.id, state: kind, value: r.value, threshold: current.threshold, condition_type: type,
      window_start: r.window.from, window_end: r.window.to, notification, action: engaged ? 'kill_switch_engaged' : null, created_at: now,
    });
    if (notification === 'queued') {
      const payload = buildPayload({
        orgId: rule.org_id,
        rule: { id: rule.id, condition_type: type, threshold: current.threshold, window_minutes: current.window_minutes, action: current.action as AlertAction | null },
        agent: { id: rule.agent_id, name: rule.agent_name },
        kind, value: r.value, window: r.window, historyId, at: now,
      }, publicUrl);
      await notificationStore.insert(trx, {
        org_id: rule.org_id, id: newId(), alert_id: rule.id, history_id: historyId, kind, channel: current.channel, recipient: current.channel_target,
        payload: JSON.stringify(payload), status: 'retrying', attempts: 0, last_error: null, next_attempt_at: now, delivered_at: null,
        claim_id: null, claimed_until: null, created_at: now, updated_at: now,
      });
    }
    await alertStore.update(trx, rule.org_id, rule.id, {
      state, last_value: r.value, last_evaluated_at: now,
      ...(kind === 'firing' ? { last_triggered_at: now } : {}),
      ...(notification === 'queued' ? { last_notified_at: now } : {}),
    });
    return { transition: true, queued: notification === 'queued', ...(engaged ? { announce: () => engaged.announce() } : {}) };
  }

  /**
   * Evaluates a claimed batch. A changed state is a transition, written in its own transaction;
   * most evaluations change nothing, and their readings are written together in one, since a
   * commit per rule is what evaluation would otherwise spend its time on.
   */
  async function evaluateBatch(rules: readonly AlertRuleView[], slot: number, result: EvaluationResult): Promise<void> {
    const steady: Array<{ rule: AlertRuleView; value: number }> = [];
    await forEachLimited(rules, CONCURRENCY, async (rule) => {
      // A deleted agent sends nothing more; judging its silence would only raise false alarms.
      if (rule.agent_deleted_at !== null) return;
      try {
        const reading = await read(rule, slot);
        if ((reading.breaching ? 'firing' : 'ok') === rule.state) {
          steady.push({ rule, value: reading.value });
          return;
        }
        const applied = await db.kysely.transaction().execute((trx) => apply(trx, rule, reading));
        applied.announce?.();
        if (applied.queued) onQueued();
        if (applied.transition) result.transitions++;
        result.evaluated++;
      } catch (err) {
        log.error({ err, worker: 'alert-evaluator', alert: rule.id }, 'alert evaluation failed; the rule is evaluated again next minute');
      }
    });
    if (steady.length === 0) return;
    try {
      const now = clock.now();
      await db.kysely.transaction().execute(async (trx) => {
        for (const { rule, value } of steady) await alertStore.recordReading(trx, rule, value, now);
      });
      result.evaluated += steady.length;
    } catch (err) {
      log.error({ err, worker: 'alert-evaluator', rules: steady.length }, 'alert readings were not recorded; the rules are evaluated again next minute');
    }
  }

  /** Evaluates every rule due at the current slot. */
  async function runOnce(): Promise<EvaluationResult> {
    const slot = slotOf(clock.now());
    const result: EvaluationResult = { slot, evaluated: 0, transitions: 0 };
    for (;;) {
      const keys = await alertStore.claimDue(slot, slot + EVALUATION_INTERVAL_MS, BATCH);
      await evaluateBatch(await alertStore.views(keys), slot, result);
      if (keys.length >= BATCH && !stopping) continue;
      onRound?.(clock.now() - (slot + SETTLE_MS));
      return result;
    }
  }

  function tick(): void {
    running = runOnce()
      .catch((err: unknown) => log.error({ err, worker: 'alert-evaluator' }, 'alert evaluation failed; the next minute retries'))
      .finally(() => {
        running = undefined;
        schedule();
      });
  }

  function schedule(): void {
    if (!started) return;
    const now = clock.now();
    timer = setTimeout(tick, Math.max(0, slotOf(now) + EVALUATION_INTERVAL_MS + SETTLE_MS - now));
    timer.unref();
  }

  return {
    name: 'alert-evaluator',
    kind: 'job',
    runOnce,
    /** Evaluates at once (what was due while the process was down), then at every slot. */
    async start() {
      started = true;
      stopping = false;
      tick();
    },
    async stop() {
      started = false;
      stopping = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running;
      stopping = false;
    },
  } satisfies Worker & Record<string, unknown>;
}
export type AlertEvaluator = ReturnType<typeof createAlertEvaluator>;
