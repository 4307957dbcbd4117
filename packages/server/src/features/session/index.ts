export { createSessionService, type SessionService } from './session-service.js';
export { sessionRoutes } from './session-routes.js';
