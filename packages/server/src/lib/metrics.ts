import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  readonly registry: Registry;
  readonly requests: Counter<'host' | 'method' | 'route' | 'status'>;
  readonly duration: Histogram<'host' | 'method' | 'route'>;
  /** Telemetry events stored for the first time (re-sent duplicates are not counted). */
  readonly eventsStored: Counter;
  /** Telemetry events in accepted batches, duplicates included: the ingest rate as clients see it. */
  readonly eventsReceived: Counter;
  /** From a batch's quota check to its commit: the store's share of an ingest request. */
  readonly batchDuration: Histogram;
  /** After each evaluation round: how long after its slot became due the round finished. */
  readonly alertEvaluationLag: Gauge;
  readonly alertEvaluationRounds: Counter;
  /** Notification delivery attempts by what came of them (`delivered`, `retrying`, `failed`). */
  readonly alertDeliveryAttempts: Counter<'outcome'>;
  /** A gauge read when /metrics is scraped (a store count, a hub's size). */
  gauge(name: string, help: string, read: () => number | Promise<number>): void;
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
    eventsReceived: new Counter({
      name: 'corral_telemetry_events_received_total',
      help: 'Telemetry events in accepted batches, re-sent duplicates included',
      registers: [registry],
    }),
    batchDuration: new Histogram({
      name: 'corral_telemetry_batch_duration_seconds',
      help: 'Time from a telemetry batch passing the rate limit to its commit in the store',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    alertEvaluationLag: new Gauge({
      name: 'corral_alert_evaluation_lag_seconds',
      help: 'How long after its minute became due the last alert evaluation round finished',
      registers: [registry],
    }),
    alertEvaluationRounds: new Counter({
      name: 'corral_alert_evaluation_rounds_total',
      help: 'Alert evaluation rounds this process ran',
      registers: [registry],
    }),
    alertDeliveryAttempts: new Counter({
      name: 'corral_alert_delivery_attempts_total',
      help: 'Alert notification delivery attempts by outcome: delivered, retrying (failed, will retry), failed (given up)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    gauge(name, help, read) {
      new Gauge({
        name,
        help,
        registers: [registry],
        // A failed read (the store is down) keeps the last value: /metrics itself must still answer.
        async collect() {
          try {
            this.set(await read());
          } catch {
            /* the previous value stands */
          }
        },
      });
    },
  };
}
