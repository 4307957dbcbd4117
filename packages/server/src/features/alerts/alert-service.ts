import {
  ALERT_LIMITS, type Alert, type AlertAction, type AlertChannel, type AlertConditionType, type AlertHistoryRecord, type AlertNotification,
  type AlertWithSecret, type CreateAlertBody, type FieldError, type NotificationStatus, type Page, type UpdateAlertBody,
} from '@corral/contracts';
import type { Transaction } from 'kysely';
import type { Store } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import { actorOf, type Principal, roleAtLeast } from '../../domain/principal.js';
import { ForbiddenError, NotFoundError, ValidationError } from '../../errors.js';
import { type Clock, toIso, toIsoOrNull } from '../../lib/clock.js';
import { toPage } from '../../lib/cursor.js';
import { newId } from '../../lib/ids.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { DAY_MS } from '../../lib/time.js';
import type { AgentService } from '../agents/index.js';
import type { AuditStore } from '../audit/index.js';
import { unitOf } from './alert-conditions.js';
import type { AlertHistoryRow, AlertRuleRow, AlertRuleView, AlertStore } from './alert-store.js';
import { channelTargetProblem } from './channel-target.js';
import { buildPayload } from './notification-content.js';
import { CLAIM_LEASE_MS, type NotificationDispatcher } from './notification-dispatcher.js';
import type { AttemptRow, NotificationRow, NotificationStore } from './notification-store.js';
import { PREVIOUS_SECRET_GRACE_MS, secretContext } from './webhook-secrets.js';
import { generateWebhookSecret } from './webhook-signature.js';

interface Deps {
  db: Pick<Store, 'kysely'>;
  alertStore: AlertStore;
  notificationStore: NotificationStore;
  agentService: Pick<AgentService, 'get'>;
  auditStore: Pick<AuditStore, 'record'>;
  dispatcher: Pick<NotificationDispatcher, 'attemptClaimed'>;
  secretBox: SecretBox;
  clock: Clock;
  publicUrl: string;
}

export function toAlert(row: AlertRuleView): Alert {
  return {
    id: row.id,
    org_id: row.org_id,
    agent_id: row.agent_id,
    agent_name: row.agent_name,
    condition_type: row.condition_type as AlertConditionType,
    threshold: Number(row.threshold),
    window_minutes: row.window_minutes,
    channel: row.channel as AlertChannel,
    channel_target: row.channel_target,
    cooldown_minutes: row.cooldown_minutes,
    action: row.action as AlertAction | null,
    notification_count: Number(row.notification_count),
    is_enabled: row.is_enabled === 1,
    state: row.state as Alert['state'],
    last_value: row.last_value === null ? null : Number(row.last_value),
    last_evaluated_at: toIsoOrNull(row.last_evaluated_at),
    last_triggered_at: toIsoOrNull(row.last_triggered_at),
    muted_until: toIsoOrNull(row.muted_until),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

function toHistoryRecord(row: AlertHistoryRow): AlertHistoryRecord {
  return {
    id: row.id,
    alert_id: row.alert_id,
    state: row.state as AlertHistoryRecord['state'],
    value: Number(row.value),
    threshold: Number(row.threshold),
    condition_type: row.condition_type as AlertConditionType,
    window_start: toIso(row.window_start),
    window_end: toIso(row.window_end),
    notification: row.notification as AlertHistoryRecord['notification'],
    action: row.action as AlertHistoryRecord['action'],
    created_at: toIso(row.created_at),
  };
}

function toNotification(row: NotificationRow, attempts: readonly AttemptRow[]): AlertNotification {
  return {
    id: row.id,
    alert_id: row.alert_id,
    history_id: row.history_id,
    kind: row.kind as AlertNotification['kind'],
    channel: row.channel as AlertChannel,
    recipient: row.recipient,
    status: row.status as NotificationStatus,
    attempts: row.attempts,
    error: row.status === 'delivered' ? null : row.last_error,
    next_attempt_at: toIsoOrNull(row.next_attempt_at),
    delivered_at: toIsoOrNull(row.delivered_at),
    attempt_log: attempts.map((a) => ({
      attempt: a.attempt, status: a.status as NotificationStatus, http_status: a.http_status, error: a.error, duration_ms: a.duration_ms, at: toIso(a.created_at),
    })),
    created_at: toIso(row.created_at),
  };
}

interface RuleSettings {
  agent_id: string;
  condition_type: AlertConditionType;
  threshold: number;
  window_minutes: number;
  channel: AlertChannel;
  channel_target: string;
  cooldown_minutes: number;
  action: AlertAction | null;
}

/** What the schema cannot say: thresholds per condition and targets per channel (docs/alerts.md). */
function settingsProblems(s: RuleSettings): FieldError[] {
  const problems: FieldError[] = [];
  if (unitOf(s.condition_type) === 'percent' && s.threshold > ALERT_LIMITS.percentThresholdMax) {
    problems.push({ field: 'threshold', message: `must be at most 100 for ${s.condition_type}, a percentage` });
  }
  if (s.condition_type === 'latency_p99' && s.threshold > ALERT_LIMITS.latencyThresholdMaxMs) {
    problems.push({ field: 'threshold', message: 'must be at most 3600000 (one hour) for latency_p99, in milliseconds' });
  }
  const target = channelTargetProblem(s.channel, s.channel_target);
  if (target) problems.push({ field: 'channel_target', message: `${target} for the ${s.channel} channel` });
  return problems;
}

/**
 * An action engages the kill switch, which only people at admin and above may touch (contract
 * section 2): setting or clearing one takes the same, so neither an API key nor a member can
 * arm a rule that stops an agent, or quietly disarm one.
 */
function checkActionChange(p: Principal, before: AlertAction | null, after: AlertAction | null): void {
  if (before === after) return;
  if (p.kind !== 'user') throw new ForbiddenError('API keys cannot set or clear an alert action; the kill switch is for people (JWT admin+)');
  if (!roleAtLeast(p.role, 'admin')) throw new ForbiddenError('Setting or clearing an alert action needs the admin role or higher');
}

export function createAlertService({ db, alertStore, notificationStore, agentService, auditStore, dispatcher, secretBox, clock, publicUrl }: Deps) {
  async function mustGet(orgId: string, id: string, conn?: Transaction<Database>): Promise<AlertRuleView> {
    const row = await alertStore.get(orgId, id, conn);
    if (!row) throw new NotFoundError('Alert');
    return row;
  }

  async function checkAgent(orgId: string, agentId: string): Promise<void> {
    await agentService.get(orgId, agentId).catch((err: unknown) => {
      if (err instanceof NotFoundError) throw new ValidationError('agent_id is not an agent of this organization', [{ field: 'agent_id', message: 'must be an agent of your organization' }]);
      throw err;
    });
  }

  function validate(s: RuleSettings): void {
    const problems = settingsProblems(s);
    if (problems.length > 0) throw new ValidationError(problems.map((p) => `${p.field} ${p.message}`).join('; '), problems);
  }

  const seal = (orgId: string, id: string, secret: string) => secretBox.seal(secret, secretContext(orgId, id));

  /** The rule as the API shows it, with a secret just made when there is one to show. */
  async function view(orgId: string, id: string, trx: Transaction<Database>, secret?: string): Promise<AlertWithSecret> {
    const alert = toAlert(await mustGet(orgId, id, trx));
    return secret === undefined ? alert : { ...alert, webhook_secret: secret };
  }

  return {
    async create(p: Principal, input: CreateAlertBody): Promise<AlertWithSecret> {
      const settings: RuleSettings = {
        agent_id: input.agent_id, condition_type: input.condition_type, threshold: input.threshold,
        window_minutes: input.window_minutes ?? ALERT_LIMITS.windowMinutes.default, channel: input.channel, channel_target: input.channel_target,
        cooldown_minutes: input.cooldown_minutes ?? ALERT_LIMITS.cooldownMinutes.default, action: input.action ?? null,
      };
      validate(settings);
      checkActionChange(p, null, settings.action);
      await checkAgent(p.orgId, settings.agent_id);
      const now = clock.now();
      const id = newId();
      const secret = settings.channel === 'webhook' ? generateWebhookSecret() : undefined;
      const row: AlertRuleRow = {
        org_id: p.orgId, id, ...settings, is_enabled: 1, state: 'ok', last_value: null, last_evaluated_at: null, last_triggered_at: null,
        last_notified_at: null, muted_until: null, notification_count: 0, webhook_secret: secret === undefined ? null : seal(p.orgId, id, secret),
        previous_webhook_secret: null, previous_secret_expires_at: null, next_eval_at: now, created_by: actorOf(p).id, created_at: now, updated_at: now,
      };
      return db.kysely.transaction().execute(async (trx) => {
        await alertStore.insert(trx, row);
        await auditStore.record(trx, {
          orgId: p.orgId, actor: actorOf(p), action: 'alert.create', targetType: 'alert', targetId: id, at: now, details: { ...settings },
        });
        return view(p.orgId, id, trx, secret);
      });
    },

    async list(orgId: string, limit: number, before: string | undefined): Promise<Page<Alert>> {
      return toPage(await alertStore.list(orgId, limit, before), limit, toAlert);
    },

    async get(orgId: string, id: string): Promise<Alert> {
      return toAlert(await mustGet(orgId, id));
    },

    /**
     * Omitted fields keep their values. A rule that moves to the webhook channel gets a new
     * secret (shown in this response only); one that leaves it loses its secrets. Changed
     * conditions are judged at the next evaluation, from the rule's current state.
     */
    async update(p: Principal, id: string, input: UpdateAlertBody): Promise<AlertWithSecret> {
      const before = await mustGet(p.orgId, id);
      const settings: RuleSettings = {
        agent_id: input.agent_id ?? before.agent_id,
        condition_type: input.condition_type ?? (before.condition_type as AlertConditionType),
        threshold: input.threshold ?? Number(before.threshold),
        window_minutes: input.window_minutes ?? before.window_minutes,
        channel: input.channel ?? (before.channel as AlertChannel),
        channel_target: input.channel_target ?? before.channel_target,
        cooldown_minutes: input.cooldown_minutes ?? before.cooldown_minutes,
        action: input.action === undefined ? (before.action as AlertAction | null) : input.action,
      };
      validate(settings);
      checkActionChange(p, before.action as AlertAction | null, settings.action);
      if (settings.agent_id !== before.agent_id) await checkAgent(p.orgId, settings.agent_id);
      const now = clock.now();
      const secret = settings.channel === 'webhook' && before.channel !== 'webhook' ? generateWebhookSecret() : undefined;
      const secrets = settings.channel !== 'webhook'
        ? { webhook_secret: null, previous_webhook_secret: null, previous_secret_expires_at: null }
        : secret !== undefined ? { webhook_secret: seal(p.orgId, id, secret), previous_webhook_secret: null, previous_secret_expires_at: null } : {};
      return db.kysely.transaction().execute(async (trx) => {
        if (!(await alertStore.getForUpdate(trx, p.orgId, id))) throw new NotFoundError('Alert');
        await alertStore.update(trx, p.orgId, id, { ...settings, ...secrets, next_eval_at: now, updated_at: now });
        await auditStore.record(trx, {
          orgId: p.orgId, actor: actorOf(p), action: 'alert.update', targetType: 'alert', targetId: id, at: now, details: { ...input },
        });
        return view(p.orgId, id, trx, secret);
      });
    },

    /** Removes the rule, its history and its notifications, undelivered ones included. */
    async delete(p: Principal, id: string): Promise<void> {
      const now = clock.now();
      await db.kysely.transaction().execute(async (trx) => {
        const existing = await mustGet(p.orgId, id, trx);
        await alertStore.delete(trx, p.orgId, id);
        await auditStore.record(trx, {
          orgId: p.orgId, actor: actorOf(p), action: 'alert.delete', targetType: 'alert', targetId: id, at: now,
          details: { agent_id: existing.agent_id, condition_type: existing.condition_type, channel: existing.channel },
        });
      });
    },

    /** A disabled rule is not evaluated and keeps its last state; enabled again, it is evaluated at the next minute. */
    async toggle(p: Principal, id: string, isEnabled: boolean): Promise<Alert> {
      const now = clock.now();
      return db.kysely.transaction().execute(async (trx) => {
        const before = await mustGet(p.orgId, id, trx);
        await alertStore.update(trx, p.orgId, id, { is_enabled: isEnabled ? 1 : 0, next_eval_at: now, updated_at: now });
        await auditStore.record(trx, {
          orgId: p.orgId, actor: actorOf(p), action: 'alert.toggle', targetType: 'alert', targetId: id, at: now,
          details: { is_enabled: isEnabled, previous: before.is_enabled === 1 },
        });
        return view(p.orgId, id, trx);
      });
    },

    /** Evaluation goes on; transitions are recorded but notify no one until `until`. */
    async mute(p: Principal, id: string, untilIso: string, reason: string | undefined): Promise<Alert> {
      const now = clock.now();
      const until = Date.parse(untilIso);
      if (!(until > now)) throw new ValidationError('until must be in the future', [{ field: 'until', message: 'must be in the future' }]);
      if (until > now + ALERT_LIMITS.muteMaxDays * DAY_MS) {
        throw new ValidationError('until may be at most 365 days ahead', [{ field: 'until', message: 'must be at most 365 days ahead; disable the rule instead' }]);
      }
      return db.kysely.transaction().execute(async (trx) => {
        const before = await mustGet(p.orgId, id, trx);
        await alertStore.update(trx, p.orgId, id, { muted_until: until, updated_at: now });
        await auditStore.record(trx, {
          orgId: p.orgId, actor: actorOf(p), action: 'alert.mute', targetType: 'alert', targetId: id, at: now, reason: reason ?? null,
          details: { until: toIso(until), previous: toIsoOrNull(before.muted_until) },
        });
        return view(p.orgId, id, trx);
      });
    },

    /** Clears the mute at once; the next transition notifies again (nothing is sent for the current state). */
    async unmute(p: Principal, id: string): Promise<Alert> {
      const now = clock.now();
      return db.kysely.transaction().execute(async (trx) => {
        const before = await mustGet(p.orgId, id, trx);
        await alertStore.update(trx, p.orgId, id, { muted_until: null, updated_at: now });
        await auditStore.record(trx, {
          orgId: p.orgId, actor: actorOf(p), action: 'alert.unmute', targetType: 'alert', targetId: id, at: now,
          details: { previous: toIsoOrNull(before.muted_until) },
        });
        return view(p.orgId, id, trx);
      });
    },

    /** A new secret, shown once; the old one keeps signing beside it for a day. */
    async rotateSecret(p: Principal, id: string): Promise<AlertWithSecret> {
      const now = clock.now();
      const secret = generateWebhookSecret();
      return db.kysely.transaction().execute(async (trx) => {
        const before = await mustGet(p.orgId, id, trx);
        if (before.channel !== 'webhook' || before.webhook_secret === null) {
          throw new ValidationError('Only webhook rules have a signing secret', [{ field: 'channel', message: 'must be webhook to rotate a secret' }]);
        }
        await alertStore.update(trx, p.orgId, id, {
          webhook_secret: seal(p.orgId, id, secret), previous_webhook_secret: before.webhook_secret,
          previous_secret_expires_at: now + PREVIOUS_SECRET_GRACE_MS, updated_at: now,
        });
        await auditStore.record(trx, {
          orgId: p.orgId, actor: actorOf(p), action: 'alert.rotate_secret', targetType: 'alert', targetId: id, at: now,
          details: { previous_valid_until: toIso(now + PREVIOUS_SECRET_GRACE_MS) },
        });
        return view(p.orgId, id, trx, secret);
      });
    },

    async history(orgId: string, id: string, limit: number, before: string | undefined): Promise<Page<AlertHistoryRecord>> {
      await mustGet(orgId, id);
      return toPage(await alertStore.listHistory(orgId, id, limit, before), limit, toHistoryRecord);
    },

    async notifications(orgId: string, id: string, limit: number, before: string | undefined): Promise<Page<AlertNotification>> {
      await mustGet(orgId, id);
      const rows = await notificationStore.list(orgId, id, limit, before);
      const attempts = await notificationStore.attemptsOf(orgId, rows.slice(0, limit).map((r) => r.id));
      return toPage(rows, limit, (row) => toNotification(row, attempts.filter((a) => a.notification_id === row.id)));
    },

    /**
     * Sends a test message to the rule's channel now, whatever its mute, cooldown or state, and
     * answers how it went: one attempt, no retries, recorded with the rule's notifications.
     */
    async sendTest(p: Principal, id: string): Promise<AlertNotification> {
      const rule = await mustGet(p.orgId, id);
      const now = clock.now();
      const claimId = newId();
      const payload = buildPayload({
        orgId: p.orgId,
        rule: { id, condition_type: rule.condition_type as AlertConditionType, threshold: Number(rule.threshold), window_minutes: rule.window_minutes, action: rule.action as AlertAction | null },
        agent: { id: rule.agent_id, name: rule.agent_name }, kind: 'test', value: null, window: null, historyId: null, at: now,
      }, publicUrl);
      const row: NotificationRow = {
        org_id: p.orgId, id: newId(), alert_id: id, history_id: null, kind: 'test', channel: rule.channel, recipient: rule.channel_target,
        payload: JSON.stringify(payload), status: 'retrying', attempts: 0, last_error: null, next_attempt_at: now, delivered_at: null,
        // Claimed from the start: no dispatcher picks it up while this request delivers it.
        claim_id: claimId, claimed_until: now + CLAIM_LEASE_MS, created_at: now, updated_at: now,
      };
      await db.kysely.transaction().execute(async (trx) => {
        await notificationStore.insert(trx, row);
        await auditStore.record(trx, {
          orgId: p.orgId, actor: actorOf(p), action: 'alert.test', targetType: 'alert', targetId: id, at: now,
          details: { notification_id: row.id, channel: row.channel, recipient: row.recipient },
        });
      });
      const done = (await dispatcher.attemptClaimed(row, claimId, true)) ?? row;
      return toNotification(done, await notificationStore.attemptsOf(p.orgId, [row.id]));
    },
  };
}
export type AlertService = ReturnType<typeof createAlertService>;

