export { createApiKeyStore, type ApiKeyStore } from './api-key-store.js';
export { createApiKeyService, type ApiKeyService, type ApiKeyEvents } from './api-key-service.js';
export { apiKeyRoutes } from './api-key-routes.js';
