export { createTelemetryStore, type TelemetryStore, type TelemetryWriter } from './telemetry-store.js';
export { createTelemetryService, type TelemetryService, type TelemetryListener } from './telemetry-service.js';
export { telemetryRoutes } from './telemetry-routes.js';
export { ALL_AGENTS, DAY_MS, GRAINS, HOUR_MS, MINUTE_MS, type EventRow } from './rollup-fold.js';
export { partitionName, type PartitionManager } from './event-partitions.js';
export { createTelemetryComposition, type TelemetryCompositionOptions } from './telemetry-composition.js';
