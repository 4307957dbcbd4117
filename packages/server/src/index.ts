export { loadConfig, type Config, ConfigError } from './config.js';
export { startService, openDatabase, jwtSecretOf, type RunningService } from './service.js';
export { buildApiApp, buildIngestApp } from './app.js';
export { createContainer, type Container } from './container.js';
export { createDatabase, type Db } from './db/database.js';
export { migrateToLatest } from './db/migrate.js';
export { signJwt } from './features/auth/index.js';
