import SqliteDatabase from 'better-sqlite3';
import { CompiledQuery, type DatabaseConnection, SqliteDialect, type SqliteDialectConfig, SqliteDriver } from 'kysely';
import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';

/**
 * Opens a SQLite connection with the service's settings. The main thread's connection and the
 * telemetry writer thread's connection (features/telemetry) both come from here, so they agree.
 */
export function openSqlite(file: string): SqliteDatabase.Database {
  if (file !== ':memory:') createPrivately(file);
  const sqlite = new SqliteDatabase(file);
  // WAL lets readers run beside the single writer; NORMAL sync is durable across process crashes.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  // 64 MB of page cache: telemetry writes touch several large indexes on every batch.
  sqlite.pragma('cache_size = -65536');
  // Two connections write to a file database (this thread's and the telemetry writer's): a
  // writer waits for the other's transaction instead of failing.
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  return sqlite;
}

/**
 * The database holds API key hashes and every organization's telemetry: readable by its owner
 * only, like the secrets beside it. SQLite creates its -wal and -shm files with the database
 * file's permissions, so they follow. An existing file is tightened too.
 */
function createPrivately(file: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  closeSync(openSync(file, 'a', 0o600));
  chmodSync(file, 0o600);
}

/**
 * Kysely's SQLite driver begins transactions DEFERRED: one that reads and then writes fails at
 * once with SQLITE_BUSY when another connection committed in between (the busy timeout does
 * not apply to that upgrade). IMMEDIATE takes the write lock at BEGIN, where the busy timeout
 * waits for the other writer instead.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

export class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;

  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }

  override createDriver(): SqliteDriver {
    return new ImmediateSqliteDriver(this.#config);
  }
}
