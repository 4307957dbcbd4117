import { Type, type Static } from '@sinclair/typebox';
import { RoleSchema } from './auth.js';
import { Timestamp, Uuid } from './common.js';
import { DsseEnvelope, PolicyHash } from './policies.js';

/** Control stream events (interface section 6); names are the SSE `event:` field. */
export const controlEventNames = ['init', 'kill_switch', 'policy_updated'] as const;
export type ControlEventName = (typeof controlEventNames)[number];

const NullableEnvelope = Type.Union([DsseEnvelope, Type.Null()]);

/** `active_policy_hash` and `policy_envelope` are null while the agent has no active policy. */
export const InitEvent = Type.Object({
  kill_switch_active: Type.Boolean(),
  active_policy_hash: Type.Union([PolicyHash, Type.Null()]),
  policy_envelope: NullableEnvelope,
});
export type InitEvent = Static<typeof InitEvent>;

export const KillSwitchEvent = Type.Object({ active: Type.Boolean() });
export type KillSwitchEvent = Static<typeof KillSwitchEvent>;

export const PolicyUpdatedEvent = Type.Object({
  version: Type.Integer({ minimum: 1 }),
  /** The activation sequence, as in the signed bundle. */
  sequence: Type.Integer({ minimum: 1 }),
  hash: PolicyHash,
  policy_envelope: DsseEnvelope,
});
export type PolicyUpdatedEvent = Static<typeof PolicyUpdatedEvent>;

export interface ControlEventData {
  init: InitEvent;
  kill_switch: KillSwitchEvent;
  policy_updated: PolicyUpdatedEvent;
}

/** The polling fallback: the same state as `init`, signed afresh on every request. */
export const ControlState = Type.Object({
  kill_switch_active: Type.Boolean(),
  policy_envelope: NullableEnvelope,
});
export type ControlState = Static<typeof ControlState>;

/** The dashboard's cookie session (contract section 2). */
export const SessionInfo = Type.Object({
  subject: Type.String(),
  org_id: Uuid,
  role: RoleSchema,
  expires_at: Timestamp,
  csrf_token: Type.String({ description: 'Send as X-CSRF-Token on every mutation authorized by the session cookie' }),
});
export type SessionInfo = Static<typeof SessionInfo>;
