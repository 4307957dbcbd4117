export { createAgentStore, type AgentStore, type AgentRow } from './agent-store.js';
export { createAgentService, type AgentService, type AgentEvents, type ServiceAgent, noAgentEvents, toAgent } from './agent-service.js';
export { agentRoutes } from './agent-routes.js';
