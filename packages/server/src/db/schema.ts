import type { Generated } from 'kysely';

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

export interface RateLimitStateTable {
  org_id: string;
  tat: number;
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
  rate_limit_state: RateLimitStateTable;
}

export type { Generated };
