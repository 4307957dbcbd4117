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

export interface Database {
  organizations: OrganizationTable;
  api_keys: ApiKeyTable;
  agents: AgentTable;
  audit_log: AuditLogTable;
}

export type { Generated };
