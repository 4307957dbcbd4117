import { Type, type Static } from '@sinclair/typebox';
import { StringEnum, Timestamp, Uuid } from './common.js';

export const AuditEntry = Type.Object(
  {
    id: Uuid,
    org_id: Uuid,
    actor_type: StringEnum(['user', 'api_key', 'system', 'alert']),
    actor_id: Type.String({ description: 'JWT subject, API key id, alert rule id, or "system"' }),
    action: Type.String({ description: 'dotted verb, e.g. agent.kill_switch' }),
    target_type: Type.String(),
    target_id: Type.String(),
    reason: Type.Union([Type.String(), Type.Null()]),
    details: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
    created_at: Timestamp,
  },
);
export type AuditEntry = Static<typeof AuditEntry>;
