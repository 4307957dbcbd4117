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
