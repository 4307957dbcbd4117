/** The few things that differ between the engines; everything else is one Kysely query. */
export type DialectName = 'sqlite' | 'postgres';

export interface Dialect {
  readonly name: DialectName;
  /** Whether `SELECT … FOR UPDATE` row locks exist (SQLite serializes writers instead). */
  readonly hasRowLocks: boolean;
}
