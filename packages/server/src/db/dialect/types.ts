/** The few things that differ between the engines; everything else is one Kysely query. */
export type DialectName = 'sqlite' | 'postgres';

export interface Dialect {
  readonly name: DialectName;
  /** Whether `SELECT … FOR UPDATE` row locks exist (SQLite serializes writers instead). */
  readonly hasRowLocks: boolean;
  /**
   * Whether raw telemetry events are partitioned by day. A partitioned table cannot hold a unique
   * index without the partition key, so request ids are then claimed in `telemetry_request_ids`,
   * which also maps an id to the day its event is stored in (migration 0003).
   */
  readonly partitionsRawEvents: boolean;
}
