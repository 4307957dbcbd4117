import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  readonly registry: Registry;
  readonly requests: Counter<'host' | 'method' | 'route' | 'status'>;
  readonly duration: Histogram<'host' | 'method' | 'route'>;
  /** Telemetry events stored for the first time (re-sent duplicates are not counted). */
  readonly eventsStored: Counter;
}

/** One registry per process (served at /metrics); both hosts record into it with a `host` label. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    requests: new Counter({
      name: 'corral_http_requests_total',
      help: 'HTTP requests by route template and status',
      labelNames: ['host', 'method', 'route', 'status'],
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'corral_http_request_duration_seconds',
      help: 'HTTP request latency by route template',
      labelNames: ['host', 'method', 'route'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    eventsStored: new Counter({
      name: 'corral_telemetry_events_stored_total',
      help: 'Telemetry events stored, from every ingest path; re-sent duplicates are not counted',
      registers: [registry],
    }),
  };
}
