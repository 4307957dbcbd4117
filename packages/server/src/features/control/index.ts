export { createMemoryControlBus, createPostgresControlBus, type ControlBus, type ControlMessage } from './control-bus.js';
export { controlEventsOn, eventsStoredHints } from './control-events.js';
export { createStreamHub, type StreamHub, HEARTBEAT_MS } from './stream-hub.js';
export { createControlService, type ControlService } from './control-service.js';
export { controlRoutes } from './control-routes.js';
