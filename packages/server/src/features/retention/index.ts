export { createRetentionStore, type RetentionStore } from './retention-store.js';
export { createRetentionWorker, type RetentionWorker, type RetentionResult } from './retention-worker.js';
