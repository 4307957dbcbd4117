export { parseSigningKey, generateSigningKeyPem, type SigningKey } from './signing-key.js';
export { preAuthEncoding } from './dsse.js';
export { createSigningKeyStore, type SigningKeyStore } from './signing-key-store.js';
export { createSigningService, type SigningService, KEY_RETENTION_MS } from './signing-service.js';
export { signingRoutes } from './signing-routes.js';
