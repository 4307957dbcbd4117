import type { EventRow } from './rollup-fold.js';

/**
 * Stores one organization's batch in one transaction: events whose request_id the organization
 * has not stored before are inserted and folded into the rollups; the rest are skipped.
 * Answers the events it stored. One implementation per engine (the composition root picks it):
 * prepared statements on a writer thread for SQLite, one JSON parameter per statement for
 * PostgreSQL. Building a 15,000-parameter statement per batch would cost more than storing it,
 * so neither goes through the query builder.
 */
export interface TelemetryWriter {
  write(rows: readonly EventRow[]): Promise<EventRow[]>;
}
