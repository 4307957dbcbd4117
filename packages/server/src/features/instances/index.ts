export { createInstanceStore, type InstanceStore } from './instance-store.js';
export { createInstanceService, type InstanceService } from './instance-service.js';
export { instanceRoutes } from './instance-routes.js';
