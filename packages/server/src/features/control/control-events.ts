import type { AgentEvents } from '../agents/index.js';
import type { ApiKeyEvents } from '../api-keys/index.js';
import type { PolicyEvents } from '../policies/index.js';
import type { ControlBus } from './control-bus.js';

/** What the agents, policies and api-keys services announce after commit, as bus hints. */
export function controlEventsOn(bus: ControlBus): AgentEvents & PolicyEvents & ApiKeyEvents {
  return {
    killSwitchChanged: (orgId, agentId) => bus.publish({ kind: 'agent_changed', orgId, agentId }),
    policyActivated: (orgId, agentId) => bus.publish({ kind: 'agent_changed', orgId, agentId }),
    agentDeleted: (orgId, agentId) => bus.publish({ kind: 'agent_deleted', orgId, agentId }),
    keyRevoked: (orgId, keyId) => bus.publish({ kind: 'key_revoked', orgId, keyId }),
  };
}

/** Hints per agent at most this often: a busy agent sends many batches a second. */
export const EVENTS_HINT_MS = 250;

/**
 * After telemetry commits, one `events_stored` hint per agent on the bus, so dashboard streams
 * in every process can tell their pages. Coalesced: the first batch hints at once, later ones
 * within EVENTS_HINT_MS become one trailing hint, so a busy agent costs at most four
 * notifications a second. The timers are unref'd: they never hold the process open.
 */
export function eventsStoredHints(bus: Pick<ControlBus, 'publish'>, intervalMs = EVENTS_HINT_MS) {
  const waiting = new Map<string, { orgId: string; agentId: string; isPending: boolean }>();
  const hint = (orgId: string, agentId: string) => bus.publish({ kind: 'events_stored', orgId, agentId });
  function schedule(key: string): void {
    setTimeout(() => {
      const entry = waiting.get(key);
      if (!entry?.isPending) {
        waiting.delete(key);
        return;
      }
      entry.isPending = false;
      hint(entry.orgId, entry.agentId);
      schedule(key);
    }, intervalMs).unref();
  }
  return (orgId: string, agentIds: Iterable<string>): void => {
    for (const agentId of new Set(agentIds)) {
      const key = `${orgId}/${agentId}`;
      const entry = waiting.get(key);
      if (entry) {
        entry.isPending = true;
        continue;
      }
      waiting.set(key, { orgId, agentId, isPending: false });
      hint(orgId, agentId);
      schedule(key);
    }
  };
}
