import type { Plan } from '@corral/contracts';
import { NotFoundError } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import type { OrgStore } from './org-store.js';

interface Deps {
  orgStore: OrgStore;
  clock: Clock;
  defaultPlan: Plan;
}

export function createOrgService({ orgStore, clock, defaultPlan }: Deps) {
  // Organizations never disappear, so a process remembers which ones it has already created
  // and the hot path pays for the insert once per organization, not once per request.
  const known = new Set<string>();
  return {
    /** Creates the organization on first sight with the default plan (contract section 2). */
    async ensure(orgId: string): Promise<void> {
      if (known.has(orgId)) return;
      await orgStore.ensure(orgId, defaultPlan, clock.now());
      known.add(orgId);
    },

    async planOf(orgId: string): Promise<Plan> {
      return (await orgStore.get(orgId))?.plan ?? defaultPlan;
    },

    /** Operator action (`corral org set-plan`); creates the organization if needed. */
    async setPlan(orgId: string, plan: Plan): Promise<void> {
      await orgStore.ensure(orgId, plan, clock.now());
      if (!(await orgStore.setPlan(orgId, plan, clock.now()))) throw new NotFoundError('Organization');
    },
  };
}
export type OrgService = ReturnType<typeof createOrgService>;
