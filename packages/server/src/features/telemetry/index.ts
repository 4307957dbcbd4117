export { createTelemetryStore, type TelemetryStore } from './telemetry-store.js';
export { createTelemetryService, type TelemetryService } from './telemetry-service.js';
export { createIngestService, type IngestService, type IngestCaller, type IngestRequest, type StoredEventsListener } from './ingest-service.js';
export type { TelemetryWriter } from './telemetry-writer.js';
export { createSqliteTelemetryWriter } from './telemetry-sqlite-writer.js';
export { createPostgresTelemetryWriter } from './telemetry-postgres-writer.js';
export { createPartitionManager, partitionName, type PartitionManager } from './event-partitions.js';
export { telemetryRoutes } from './telemetry-routes.js';
export type { EventRow } from './rollup-fold.js';
