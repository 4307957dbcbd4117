import type SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Dialect } from './dialect/types.js';
import { postgresDialect } from './dialect/postgres.js';
import { sqliteDialect } from './dialect/sqlite.js';
import type { Database } from './schema.js';
import { ImmediateSqliteDialect, openSqlite } from './sqlite-connection.js';
import { translatingDialect } from './translate-error.js';

/**
 * What features get: one query builder over both engines and the few differences between them.
 * Queries through it raise the service's errors, never a driver's (db/translate-error.ts).
 */
export interface Store {
  readonly kysely: Kysely<Database>;
  readonly dialect: Dialect;
}

/** The embedded engine. `file` is a path, or ':memory:'. */
export interface SqliteDb extends Store {
  readonly engine: 'sqlite';
  readonly file: string;
  /** The main thread's connection, for the engine adapters (telemetry's prepared-statement writer). */
  readonly sqlite: SqliteDatabase.Database;
  close(): Promise<void>;
}

export interface PostgresDb extends Store {
  readonly engine: 'postgres';
  /** For the engine adapters only: LISTEN/NOTIFY, the telemetry writer, day partitions. */
  readonly pool: pg.Pool;
  close(): Promise<void>;
}

/**
 * The store, a closed union chosen once from the configuration. Only the composition root looks
 * at `engine`, to pick each engine-specific adapter; features take `Store` and interfaces.
 */
export type Db = SqliteDb | PostgresDb;

export type DatabaseOptions =
  | { readonly databaseUrl: string; readonly poolSize?: number; /** Tests isolate themselves in throw-away schemas. */ readonly pgSchema?: string }
  | { readonly sqliteFile: string };

// BIGINT (int8) and NUMERIC come back from pg as strings by default; our BIGINTs are epoch
// milliseconds and counters that fit a double exactly.
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
    if (oid === 20 || oid === 1700) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format) as (value: string) => unknown;
  },
};

export function createDatabase(options: DatabaseOptions): Db {
  return 'databaseUrl' in options
    ? createPostgres(options.databaseUrl, options.poolSize ?? 10, options.pgSchema)
    : createSqlite(options.sqliteFile);
}

function createSqlite(file: string): SqliteDb {
  const sqlite = openSqlite(file);
  const kysely = new Kysely<Database>({ dialect: translatingDialect(new ImmediateSqliteDialect({ database: sqlite }), 'sqlite') });
  return { engine: 'sqlite', kysely, dialect: sqliteDialect, file, sqlite, close: () => kysely.destroy() };
}

function createPostgres(url: string, poolSize: number, schema: string | undefined): PostgresDb {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    types: pgTypes,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  // An idle client's error (server restart) must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  // Nor may a checked-out one's: when the connection drops, pg fails the client's queries (which
  // the store translates into 503s) and also emits 'error' on the client, which the pool only
  // listens to while the client is idle. Unheard, that event would end the process.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const kysely = new Kysely<Database>({ dialect: translatingDialect(new PostgresDialect({ pool }), 'postgres') });
  return { engine: 'postgres', kysely, dialect: postgresDialect, pool, close: () => kysely.destroy() };
}
