import { Type, type Static } from '@sinclair/typebox';

export const roles = ['viewer', 'member', 'admin', 'owner'] as const;
export type Role = (typeof roles)[number];
export const RoleSchema = Type.Union(roles.map((r) => Type.Literal(r)));

export const plans = ['free', 'team', 'enterprise'] as const;
export type Plan = (typeof plans)[number];
export const PlanSchema = Type.Union(plans.map((p) => Type.Literal(p)));

/** Resources a restricted API key can be granted (contract section 2). */
export const scopeResources = ['agents', 'policies', 'events', 'alerts'] as const;
export type ScopeResource = (typeof scopeResources)[number];
export const Access = Type.Union([Type.Literal('read'), Type.Literal('write')]);
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
