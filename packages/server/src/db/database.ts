import type SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Dialect } from './dialect/types.js';
import { postgresDialect } from './dialect/postgres.js';
import { sqliteDialect } from './dialect/sqlite.js';
import { ImmediateSqliteDialect, openSqlite } from './sqlite-connection.js';
import type { Database } from './schema.js';

export interface Db {
  readonly kysely: Kysely<Database>;
  readonly dialect: Dialect;
  /** The pg pool, for the PostgreSQL-only paths (LISTEN/NOTIFY, COPY). */
  readonly pgPool: pg.Pool | undefined;
  /** The SQLite file path, or ':memory:'. */
  readonly sqlitePath: string | undefined;
  /** The better-sqlite3 handle, for the SQLite-only paths (telemetry's prepared-statement writer). */
  readonly sqlite?: SqliteDatabase.Database | undefined;
  /** Runs `hook` when the store closes, before its connections do (helper threads that own a connection). */
  beforeClose(hook: () => Promise<void>): void;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** postgres://… selects PostgreSQL; otherwise SQLite at `sqlitePath`. */
  databaseUrl?: string | undefined;
  sqlitePath?: string;
  poolSize?: number;
  /** PostgreSQL schema to use (tests isolate themselves in throw-away schemas). */
  pgSchema?: string;
}

// BIGINT (int8) and NUMERIC come back from pg as strings by default; our BIGINTs are epoch
// milliseconds and counters that fit a double exactly.
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20 || oid === 1700) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

export function createDatabase(options: DatabaseOptions): Db {
  if (options.databaseUrl) return createPostgres(options.databaseUrl, options.poolSize ?? 10, options.pgSchema);
  return createSqlite(options.sqlitePath ?? ':memory:');
}

/** Closing, for both engines: the registered hooks first (helper threads with their own connection), then the pool. */
function closing(kysely: Kysely<Database>): Pick<Db, 'beforeClose' | 'close'> {
  const hooks: Array<() => Promise<void>> = [];
  return {
    beforeClose: (hook) => void hooks.push(hook),
    async close() {
      for (const hook of hooks.splice(0)) await hook();
      await kysely.destroy();
    },
  };
}

function createSqlite(file: string): Db {
  const sqlite = openSqlite(file);
  const kysely = new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database: sqlite }) });
  return {
    kysely,
    dialect: sqliteDialect,
    pgPool: undefined,
    sqlitePath: file,
    sqlite,
    ...closing(kysely),
  };
}

function createPostgres(url: string, poolSize: number, schema: string | undefined): Db {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    types: pgTypes,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  // An idle client's error (server restart) must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    kysely,
    dialect: postgresDialect,
    pgPool: pool,
    sqlitePath: undefined,
    ...closing(kysely),
  };
}
