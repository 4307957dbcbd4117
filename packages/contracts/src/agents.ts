import { Type, type Static } from '@sinclair/typebox';
import { StringEnum, Timestamp, Uuid } from './common.js';

export const PolicyMode = StringEnum(['enforce', 'dry_run']);
export type PolicyMode = Static<typeof PolicyMode>;

const AgentStatus = StringEnum(['active', 'inactive']);

export const Agent = Type.Object(
  {
    id: Uuid,
    org_id: Uuid,
    name: Type.String(),
    slug: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    status: AgentStatus,
    public_key: Type.Union([Type.String(), Type.Null()]),
    kill_switch_active: Type.Boolean(),
    active_policy_mode: Type.Optional(Type.Union([PolicyMode, Type.Null()])),
    created_at: Timestamp,
  },
);
export type Agent = Static<typeof Agent>;

const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' });
const Description = Type.String({ maxLength: 1000 });

export const CreateAgentBody = Type.Object(
  { name: Name, description: Type.Optional(Description) },
  { additionalProperties: false },
);
export type CreateAgentBody = Static<typeof CreateAgentBody>;

export const UpdateAgentBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
    status: Type.Optional(AgentStatus),
  },
  { additionalProperties: false },
);
export type UpdateAgentBody = Static<typeof UpdateAgentBody>;

export const KillSwitchBody = Type.Object(
  { active: Type.Boolean(), reason: Type.Optional(Type.String({ maxLength: 1000 })) },
  { additionalProperties: false },
);
export type KillSwitchBody = Static<typeof KillSwitchBody>;

export const PublicKeyBody = Type.Object(
  { public_key: Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: 'hex Ed25519 public key (32 bytes)' }) },
  { additionalProperties: false },
);
export type PublicKeyBody = Static<typeof PublicKeyBody>;

export const PublicKeyResult = Type.Object({ registered: Type.Boolean(), public_key: Type.String() });
export type PublicKeyResult = Static<typeof PublicKeyResult>;
