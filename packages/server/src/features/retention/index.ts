export { createRetentionStore, type RetentionStore } from './retention-store.js';
export { createRowEventExpiry, createPartitionEventExpiry, type EventExpiry } from './event-expiry.js';
export { createRetentionWorker, type RetentionWorker, type RetentionResult } from './retention-worker.js';
