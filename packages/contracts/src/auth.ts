import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from './common.js';

export const roles = ['viewer', 'member', 'admin', 'owner'] as const;
export type Role = (typeof roles)[number];
export const RoleSchema = StringEnum(roles);

export const plans = ['free', 'team', 'enterprise'] as const;
export type Plan = (typeof plans)[number];
export const PlanSchema = StringEnum(plans);

/** Resources a restricted API key can be granted (contract section 2). */
export const scopeResources = ['agents', 'policies', 'events', 'alerts'] as const;
export type ScopeResource = (typeof scopeResources)[number];
export const Access = StringEnum(['read', 'write']);
export type Access = Static<typeof Access>;

export const ApiKeyScope = Type.Union([
  Type.Object({ kind: Type.Literal('all') }, { additionalProperties: false }),
  Type.Object({ kind: Type.Literal('read_only') }, { additionalProperties: false }),
  Type.Object(
    {
      kind: Type.Literal('restricted'),
      resources: Type.Partial(
        Type.Object({ agents: Access, policies: Access, events: Access, alerts: Access }, { additionalProperties: false }),
        { additionalProperties: false, minProperties: 1 },
      ),
    },
    { additionalProperties: false },
  ),
]);
export type ApiKeyScope = Static<typeof ApiKeyScope>;
