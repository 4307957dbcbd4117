export { loadConfig, type Config, ConfigError } from './config.js';
export { startService, runService, openDatabase, jwtSecretOf, type RunningService } from './service.js';
export { signJwt } from './features/auth/index.js';
export { migrateStore, setOrganizationPlan, type MigrationOutcome, type PlanChange } from './operator-tasks.js';
export { generateOpenApiDocument } from './openapi-document.js';
