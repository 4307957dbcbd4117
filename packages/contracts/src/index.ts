export * from './errors.js';
export * from './common.js';
export * from './auth.js';
export * from './keys.js';
export * from './agents.js';
export * from './audit.js';
