import { Type, type Static } from '@sinclair/typebox';
import { Timestamp, Uuid } from './common.js';

export const AuditEntry = Type.Object(
  {
    id: Uuid,
    org_id: Uuid,
    actor_type: Type.Union([Type.Literal('user'), Type.Literal('api_key'), Type.Literal('system')]),
    actor_id: Type.String({ description: 'JWT subject, API key id, or "system"' }),
    action: Type.String({ description: 'dotted verb, e.g. agent.kill_switch' }),
    target_type: Type.String(),
    target_id: Type.String(),
    reason: Type.Union([Type.String(), Type.Null()]),
    details: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
    created_at: Timestamp,
  },
);
export type AuditEntry = Static<typeof AuditEntry>;
