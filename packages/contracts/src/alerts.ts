import { Type, type Static } from '@sinclair/typebox';
import { NullableTimestamp, StringEnum, Timestamp, Uuid } from './common.js';

export const alertConditionTypes = ['error_rate', 'latency_p99', 'denied_rate', 'volume_drop'] as const;
export type AlertConditionType = (typeof alertConditionTypes)[number];
export const AlertConditionType = StringEnum(alertConditionTypes, {
  description: 'error_rate and denied_rate: percent of calls; latency_p99: milliseconds; volume_drop: percent fewer calls than the previous window',
});

export const alertChannels = ['email', 'webhook'] as const;
export type AlertChannel = (typeof alertChannels)[number];
export const AlertChannel = StringEnum(alertChannels);

export const alertActions = ['kill_switch'] as const;
export type AlertAction = (typeof alertActions)[number];
export const AlertAction = StringEnum(alertActions, { description: "kill_switch engages the agent's kill switch when the rule fires" });

/** Bounds the service enforces (docs/alerts.md). */
export const ALERT_LIMITS = {
  windowMinutes: { min: 1, max: 1440, default: 15 },
  cooldownMinutes: { min: 0, max: 10_080, default: 60 },
  /** Percent conditions cannot exceed 100; latency thresholds stop at an hour. */
  percentThresholdMax: 100,
  latencyThresholdMaxMs: 3_600_000,
  channelTargetMaxLength: 2048,
  /** The longest a mute may last. */
  muteMaxDays: 365,
} as const;

export const Alert = Type.Object({
  id: Uuid,
  org_id: Uuid,
  agent_id: Uuid,
  agent_name: Type.String({ description: "the monitored agent's name" }),
  condition_type: AlertConditionType,
  threshold: Type.Number(),
  window_minutes: Type.Integer(),
  channel: AlertChannel,
  channel_target: Type.String({ description: 'email address or webhook URL' }),
  cooldown_minutes: Type.Integer(),
  action: Type.Union([AlertAction, Type.Null()]),
  notification_count: Type.Integer({ description: 'notifications delivered for firing and resolved transitions (tests excluded)' }),
  is_enabled: Type.Boolean(),
  state: StringEnum(['ok', 'firing'], { description: 'the state of the last evaluation' }),
  last_value: Type.Union([Type.Number(), Type.Null()], { description: 'the value of the last evaluation; null before the first' }),
  last_evaluated_at: NullableTimestamp,
  last_triggered_at: NullableTimestamp,
  muted_until: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type Alert = Static<typeof Alert>;

export const AlertWithSecret = Type.Composite([
  Alert,
  Type.Object({
    webhook_secret: Type.Optional(Type.String({
      description: 'whsec_… signing secret of a webhook rule. Returned only when it is made: at creation, on a switch to the webhook channel, and on rotation',
    })),
  }),
]);
export type AlertWithSecret = Static<typeof AlertWithSecret>;

const Threshold = Type.Number({ exclusiveMinimum: 0, description: 'greater than 0; at most 100 for percent conditions, 3,600,000 for latency_p99' });
const WindowMinutes = Type.Integer({ minimum: ALERT_LIMITS.windowMinutes.min, maximum: ALERT_LIMITS.windowMinutes.max });
const CooldownMinutes = Type.Integer({ minimum: ALERT_LIMITS.cooldownMinutes.min, maximum: ALERT_LIMITS.cooldownMinutes.max });
const ChannelTarget = Type.String({ minLength: 1, maxLength: ALERT_LIMITS.channelTargetMaxLength, description: 'an email address for email, an http(s) URL for webhook' });
const NullableAction = Type.Union([AlertAction, Type.Null()], { description: 'setting or clearing it takes an admin (JWT)' });

export const CreateAlertBody = Type.Object(
  {
    agent_id: Uuid,
    condition_type: AlertConditionType,
    threshold: Threshold,
    window_minutes: Type.Optional(WindowMinutes),
    channel: AlertChannel,
    channel_target: ChannelTarget,
    cooldown_minutes: Type.Optional(CooldownMinutes),
    action: Type.Optional(NullableAction),
  },
  { additionalProperties: false },
);
export type CreateAlertBody = Static<typeof CreateAlertBody>;

export const UpdateAlertBody = Type.Object(
  {
    agent_id: Type.Optional(Uuid),
    condition_type: Type.Optional(AlertConditionType),
    threshold: Type.Optional(Threshold),
    window_minutes: Type.Optional(WindowMinutes),
    channel: Type.Optional(AlertChannel),
    channel_target: Type.Optional(ChannelTarget),
    cooldown_minutes: Type.Optional(CooldownMinutes),
    action: Type.Optional(NullableAction),
  },
  { additionalProperties: false },
);
export type UpdateAlertBody = Static<typeof UpdateAlertBody>;

export const ToggleAlertBody = Type.Object({ is_enabled: Type.Boolean() }, { additionalProperties: false });
export type ToggleAlertBody = Static<typeof ToggleAlertBody>;

export const MuteAlertBody = Type.Object(
  {
    until: Type.String({ format: 'date-time', description: 'RFC 3339, in the future, at most 365 days ahead' }),
    reason: Type.Optional(Type.String({ maxLength: 1000, description: 'recorded in the audit log' })),
  },
  { additionalProperties: false },
);
export type MuteAlertBody = Static<typeof MuteAlertBody>;

export const alertTransitionStates = ['firing', 'resolved'] as const;
export type AlertTransitionState = (typeof alertTransitionStates)[number];

export const AlertHistoryRecord = Type.Object({
  id: Uuid,
  alert_id: Uuid,
  state: StringEnum(alertTransitionStates),
  value: Type.Number({ description: 'the value that caused the transition, in the unit of the condition' }),
  threshold: Type.Number(),
  condition_type: AlertConditionType,
  window_start: Timestamp,
  window_end: Timestamp,
  notification: StringEnum(['queued', 'muted', 'cooldown'], { description: 'queued: a notification went to the outbox; otherwise why none did' }),
  action: Type.Union([StringEnum(['kill_switch_engaged']), Type.Null()]),
  created_at: Timestamp,
});
export type AlertHistoryRecord = Static<typeof AlertHistoryRecord>;

export const notificationStatuses = ['delivered', 'failed', 'retrying'] as const;
export type NotificationStatus = (typeof notificationStatuses)[number];

export const NotificationAttempt = Type.Object({
  attempt: Type.Integer({ minimum: 1 }),
  status: StringEnum(notificationStatuses, { description: 'delivered; retrying: failed, another attempt is scheduled; failed: no attempt follows' }),
  http_status: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  duration_ms: Type.Integer(),
  at: Timestamp,
});
export type NotificationAttempt = Static<typeof NotificationAttempt>;

export const AlertNotification = Type.Object({
  id: Uuid,
  alert_id: Uuid,
  history_id: Type.Union([Uuid, Type.Null()]),
  kind: StringEnum(['firing', 'resolved', 'test']),
  channel: AlertChannel,
  recipient: Type.String(),
  status: StringEnum(notificationStatuses),
  attempts: Type.Integer({ description: 'attempts made so far' }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'what the last failed attempt ran into' }),
  next_attempt_at: NullableTimestamp,
  delivered_at: NullableTimestamp,
  attempt_log: Type.Array(NotificationAttempt),
  created_at: Timestamp,
});
export type AlertNotification = Static<typeof AlertNotification>;

/** The JSON body of every webhook (docs/alerts.md), signed per Standard Webhooks. */
export const WebhookPayload = Type.Object({
  type: StringEnum(['alert.firing', 'alert.resolved', 'alert.test']),
  timestamp: Timestamp,
  data: Type.Object({
    org_id: Uuid,
    alert: Type.Object({
      id: Uuid,
      condition_type: AlertConditionType,
      threshold: Type.Number(),
      window_minutes: Type.Integer(),
      action: Type.Union([AlertAction, Type.Null()]),
    }),
    agent: Type.Object({ id: Uuid, name: Type.String(), url: Type.String() }),
    state: StringEnum(['firing', 'resolved', 'test']),
    value: Type.Union([Type.Number(), Type.Null()]),
    threshold: Type.Number(),
    unit: StringEnum(['percent', 'ms']),
    window_start: Type.Union([Timestamp, Type.Null()]),
    window_end: Type.Union([Timestamp, Type.Null()]),
    history_id: Type.Union([Uuid, Type.Null()]),
    summary: Type.String({ description: 'one line for people: what fired, the value and the threshold' }),
  }),
});
export type WebhookPayload = Static<typeof WebhookPayload>;
