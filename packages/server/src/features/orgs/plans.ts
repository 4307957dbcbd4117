import type { Plan } from '@corral/contracts';

/** Resource limits per plan (interface section 8, contract section 5). Infinity = unlimited. */
export const planLimits: Record<Plan, { readonly apiKeys: number; readonly agents: number }> = {
  free: { apiKeys: 2, agents: 5 },
  team: { apiKeys: 20, agents: 50 },
  enterprise: { apiKeys: Number.POSITIVE_INFINITY, agents: Number.POSITIVE_INFINITY },
};
