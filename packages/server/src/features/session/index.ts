export { createSessionService, type SessionService, SESSION_COOKIE, CSRF_HEADER } from './session-service.js';
export { sessionRoutes } from './session-routes.js';
