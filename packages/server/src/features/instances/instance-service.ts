import { type AgentInstance, INSTANCE_STALE_SECONDS, type Page, type ReportInstanceBody } from '@corral/contracts';
import { type Clock, toIso, toIsoOrNull } from '../../lib/clock.js';
import { toPage } from '../../lib/cursor.js';
import { newId } from '../../lib/ids.js';
import type { AgentService } from '../agents/index.js';
import type { InstanceRow, InstanceStore } from './instance-store.js';

interface Deps {
  instanceStore: InstanceStore;
  agentService: Pick<AgentService, 'get'>;
  clock: Clock;
}

export function createInstanceService({ instanceStore, agentService, clock }: Deps) {
  const view = (row: InstanceRow, now: number): AgentInstance => ({
    instance_id: row.instance_id,
    hostname: row.hostname,
    sdk_version: row.sdk_version,
    transport: row.transport as AgentInstance['transport'],
    applied_at: toIsoOrNull(row.applied_at),
    // Honest by construction: only an instance heard from recently, and not closed since, counts as connected.
    connected: row.closed_at === null && now - row.last_seen_at <= INSTANCE_STALE_SECONDS * 1000,
    policy_version: row.policy_version,
    policy_sequence: row.policy_sequence,
    policy_hash: row.policy_hash,
    kill_switch_active: row.kill_switch_active === 1,
    last_seen_at: toIso(row.last_seen_at),
    closed_at: toIsoOrNull(row.closed_at),
  });

  return {
    /** Records what one SDK process has applied; 404 for an unknown agent or another organization's. */
    async report(orgId: string, agentId: string, body: ReportInstanceBody): Promise<AgentInstance> {
      await agentService.get(orgId, agentId);
      const now = clock.now();
      // The SDK's clock may run ahead; an applied_at in the future is recorded as now.
      const applied = body.applied_at === null ? null : Math.min(Date.parse(body.applied_at), now);
      const row = await instanceStore.upsert({
        org_id: orgId,
        agent_id: agentId,
        instance_id: body.instance_id,
        id: newId(),
        hostname: body.hostname,
        sdk_version: body.sdk_version,
        transport: body.transport,
        applied_at: applied,
        policy_version: body.policy_version,
        policy_sequence: body.policy_sequence,
        policy_hash: body.policy_hash,
        kill_switch_active: body.kill_switch_active ? 1 : 0,
        last_seen_at: now,
        closed_at: body.closed === true ? now : null,
      });
      return view(row, now);
    },

    async list(orgId: string, agentId: string, limit: number, before: string | undefined): Promise<Page<AgentInstance>> {
      await agentService.get(orgId, agentId);
      const now = clock.now();
      return toPage(await instanceStore.list(orgId, agentId, limit, before), limit, (row) => view(row, now));
    },
  };
}
export type InstanceService = ReturnType<typeof createInstanceService>;
