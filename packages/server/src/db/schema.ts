import type { Generated } from 'kysely';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../lib/time.js';

/**
 * Row types of every table. Conventions that let one query serve both engines:
 * times are epoch milliseconds (BIGINT / INTEGER), booleans are 0/1 integers,
 * JSON is TEXT, ids are UUIDs (uuid / TEXT). Every table carries `org_id`.
 */
export interface OrganizationTable {
  org_id: string;
  plan: string;
  created_at: number;
  updated_at: number;
}

export interface ApiKeyTable {
  org_id: string;
  id: string;
  name: string;
  description: string | null;
  key_prefix: string;
  key_hash: string;
  environment: string;
  scope: string;
  created_by: string;
  last_used_at: number | null;
  expires_at: number | null;
  revoked_at: number | null;
  created_at: number;
}

export interface AgentTable {
  org_id: string;
  id: string;
  name: string;
  slug: string;
  description: string | null;
  status: string;
  public_key: string | null;
  kill_switch_active: number;
  active_policy_version: number | null;
  active_policy_mode: string | null;
  /** Counts the agent's policy activations; the active policy's bundles carry it (migration 0005). */
  policy_sequence: number;
  /** The OTLP `service.name` the agent was provisioned from (migration 0008); null for agents made through the API. */
  service_name: string | null;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

export interface AuditLogTable {
  org_id: string;
  id: string;
  actor_type: string;
  actor_id: string;
  action: string;
  target_type: string;
  target_id: string;
  reason: string | null;
  details: string | null;
  created_at: number;
}

export interface PolicyVersionTable {
  org_id: string;
  agent_id: string;
  version: number;
  id: string;
  hash: string;
  mode: string;
  description: string | null;
  document: string;
  created_by: string;
  created_at: number;
  activated_at: number | null;
}

/** Service-wide, not per organization: see migration 0002. */
export interface SigningKeyTable {
  keyid: string;
  algorithm: string;
  public_key: string;
  created_at: number;
  last_used_at: number;
}

/** Raw telemetry; see migration 0003 and docs/telemetry.md. */
export interface TelemetryEventTable {
  org_id: string;
  ts: number;
  request_id: string;
  agent_id: string;
  method: string;
  url_host: string;
  url_path: string;
  status_code: number | null;
  latency_ms: number | null;
  policy_result: string;
  deny_reason: string | null;
  trace_id: string | null;
  span_id: string | null;
  gen_ai: string | null;
  received_at: number;
}

/** PostgreSQL only: request_id uniqueness across the day partitions. */
export interface TelemetryRequestIdTable {
  org_id: string;
  request_id: string;
  ts: number;
}

/**
 * Rollup grains (bucket widths in ms), finest first. Every stored batch is folded into all three
 * in its own transaction; the dashboard reads the coarsest that fits, retention drops by grain.
 */
export const ROLLUP_GRAINS = [MINUTE_MS, HOUR_MS, DAY_MS] as const;
/** The agent_id of an organization-wide rollup row, so the common questions read one row per bucket. */
export const ALL_AGENTS = '00000000-0000-0000-0000-000000000000';

interface RollupCounts {
  org_id: string;
  grain: number;
  bucket_start: number;
  total_calls: number;
  allowed_calls: number;
  denied_calls: number;
  error_calls: number;
}

export interface TelemetryRollupTable extends RollupCounts {
  agent_id: string;
  latency_count: number;
  latency_sum: number;
  latency_hist: string;
}

export interface TelemetryHostRollupTable extends RollupCounts {
  url_host: string;
}

export interface TelemetryRuleRollupTable {
  org_id: string;
  grain: number;
  bucket_start: number;
  rule_name: string;
  total_calls: number;
  denied_calls: number;
  dry_run_calls: number;
}

/** GenAI usage per bucket, agent, provider and model (migration 0008); cost is priced at read time. */
export interface TelemetryModelRollupTable {
  org_id: string;
  grain: number;
  bucket_start: number;
  agent_id: string;
  provider: string;
  model: string;
  calls: number;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  reasoning_tokens: number;
}

export interface RateLimitStateTable {
  org_id: string;
  tat: number;
}

/** Alert rules and their state; see migration 0006 and docs/alerts.md. */
export interface AlertRuleTable {
  org_id: string;
  id: string;
  agent_id: string;
  condition_type: string;
  threshold: number;
  window_minutes: number;
  channel: string;
  channel_target: string;
  cooldown_minutes: number;
  action: string | null;
  is_enabled: number;
  state: string;
  last_value: number | null;
  last_evaluated_at: number | null;
  last_triggered_at: number | null;
  last_notified_at: number | null;
  muted_until: number | null;
  notification_count: number;
  webhook_secret: string | null;
  previous_webhook_secret: string | null;
  previous_secret_expires_at: number | null;
  next_eval_at: number;
  created_by: string;
  created_at: number;
  updated_at: number;
}

export interface AlertHistoryTable {
  org_id: string;
  id: string;
  alert_id: string;
  state: string;
  value: number;
  threshold: number;
  condition_type: string;
  window_start: number;
  window_end: number;
  notification: string;
  action: string | null;
  created_at: number;
}

/** The notification outbox: one row per message, kept as its delivery record. */
export interface AlertNotificationTable {
  org_id: string;
  id: string;
  alert_id: string;
  history_id: string | null;
  kind: string;
  channel: string;
  recipient: string;
  payload: string;
  status: string;
  attempts: number;
  last_error: string | null;
  next_attempt_at: number | null;
  delivered_at: number | null;
  claim_id: string | null;
  claimed_until: number | null;
  created_at: number;
  updated_at: number;
}

export interface AlertNotificationAttemptTable {
  org_id: string;
  notification_id: string;
  attempt: number;
  status: string;
  http_status: number | null;
  error: string | null;
  duration_ms: number;
  created_at: number;
}

/** One SDK process of an agent and what it has applied (migration 0007). */
export interface AgentInstanceTable {
  org_id: string;
  agent_id: string;
  instance_id: string;
  id: string;
  hostname: string;
  sdk_version: string;
  transport: string;
  applied_at: number | null;
  policy_version: number | null;
  policy_sequence: number | null;
  policy_hash: string | null;
  kill_switch_active: number;
  last_seen_at: number;
  /** Set by the instance's closing report (migration 0009), cleared by any later report. */
  closed_at: number | null;
}

export interface Database {
  organizations: OrganizationTable;
  api_keys: ApiKeyTable;
  agents: AgentTable;
  audit_log: AuditLogTable;
  policy_versions: PolicyVersionTable;
  signing_keys: SigningKeyTable;
  telemetry_events: TelemetryEventTable;
  telemetry_request_ids: TelemetryRequestIdTable;
  telemetry_rollups: TelemetryRollupTable;
  telemetry_host_rollups: TelemetryHostRollupTable;
  telemetry_rule_rollups: TelemetryRuleRollupTable;
  telemetry_model_rollups: TelemetryModelRollupTable;
  rate_limit_state: RateLimitStateTable;
  alert_rules: AlertRuleTable;
  alert_history: AlertHistoryTable;
  alert_notifications: AlertNotificationTable;
  alert_notification_attempts: AlertNotificationAttemptTable;
  agent_instances: AgentInstanceTable;
}

export type { Generated };
