import { plans } from '@corral/contracts';
import { type Command, oneOf, parseOrgId } from '../command.js';
import { loadServer, loadServiceConfig } from '../server.js';

export const orgSetPlan: Command = {
  name: 'org set-plan',
  describe: "Change an organization's plan (free, team, enterprise)",
  args: ['org_id', 'plan'],
  options: {},
  notes: [
    'Works directly on the store (DATA_DIR or DATABASE_URL), with or without a running server;',
    'the new limits apply to the next request. An organization not seen yet is created with the',
    'plan. The change is recorded in the audit log as a system action.',
  ],
  async run({ args, output }) {
    const orgId = parseOrgId(args[0], 'org_id', orgSetPlan);
    const plan = oneOf(args[1], plans, 'plan', orgSetPlan);
    const config = await loadServiceConfig();
    const { setOrganizationPlan } = await loadServer();
    const change = await setOrganizationPlan(config, orgId, plan);
    const was =
      change.previousPlan === null ? 'new organization' : change.previousPlan === plan ? 'unchanged' : `was ${change.previousPlan}`;
    output.result(`Organization ${orgId} is on the ${plan} plan (${was}).`, {
      org_id: orgId,
      plan,
      previous_plan: change.previousPlan,
    });
  },
};
