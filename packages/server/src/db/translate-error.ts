import type { CompiledQuery, DatabaseConnection, Dialect as KyselyDialect, Driver, QueryResult, TransactionSettings } from 'kysely';
import { AppError, ConflictError, UnavailableError } from '../errors.js';
import type { DialectName } from './dialect/types.js';

/*
 * Driver errors become the service's errors here and nowhere else: every Kysely query passes
 * through `translatingDialect`, and the engine adapters that talk to a driver directly (the
 * telemetry writers, the partition manager, the control bus) call `translateStoreError` in
 * their own catch. Services only ever see AppErrors, or an error nobody could classify (a bug,
 * answered as a 500 with the message hidden).
 */

const codeOf = (err: unknown): string | undefined => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
};
const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export function isUniqueViolation(dialect: DialectName, err: unknown): boolean {
  const code = codeOf(err);
  if (dialect === 'postgres') return code === '23505';
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** A table or other object that already exists (another process created it first). */
export const isDuplicateObject = (err: unknown): boolean => ['42P07', '42710', '23505'].includes(codeOf(err) ?? '');

// SQLSTATE 08 (connection exception), 53300 (too many connections), 57P01-57P03 (the server is
// shutting down, crashing or starting up); and the errors Node and pg raise without a code.
const pgUnavailableCodes = new Set(['53300', '57P01', '57P02', '57P03', '57014']);
const networkCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'EAI_AGAIN', 'ENETUNREACH']);
const pgUnavailableMessages = /Connection terminated|timeout exceeded when trying to connect|not queryable|Cannot use a pool after calling end/i;

function unavailableReason(dialect: DialectName, err: unknown): string | undefined {
  const code = codeOf(err) ?? '';
  if (dialect === 'postgres') {
    if (code.startsWith('08') || pgUnavailableCodes.has(code) || networkCodes.has(code) || pgUnavailableMessages.test(messageOf(err))) {
      return 'The database is unavailable; retry shortly';
    }
    return undefined;
  }
  if (code === 'SQLITE_FULL' || code === 'SQLITE_IOERR_WRITE' || code === 'SQLITE_IOERR_FSYNC') return 'The store cannot write: its disk is full or failing';
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'The store is busy; retry shortly';
  if (code.startsWith('SQLITE_IOERR') || code === 'SQLITE_READONLY' || code === 'SQLITE_CANTOPEN') return 'The store cannot be read or written; retry shortly';
  return undefined;
}

/** The service's error for a driver error: a conflict, an outage (503), or the error as it was. */
export function translateStoreError(dialect: DialectName, err: unknown): unknown {
  if (err instanceof AppError) return err;
  if (isUniqueViolation(dialect, err)) {
    const conflict = new ConflictError('The change conflicts with the current state; reload and retry');
    conflict.cause = err;
    return conflict;
  }
  const unavailable = unavailableReason(dialect, err);
  if (unavailable) return new UnavailableError(unavailable, 5, { cause: err });
  return err;
}

async function translated<T>(dialect: DialectName, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw translateStoreError(dialect, err);
  }
}

class TranslatingConnection implements DatabaseConnection {
  constructor(readonly inner: DatabaseConnection, private readonly dialect: DialectName) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return translated(this.dialect, () => this.inner.executeQuery<R>(query));
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    try {
      yield* this.inner.streamQuery<R>(query, chunkSize);
    } catch (err) {
      throw translateStoreError(this.dialect, err);
    }
  }
}

const innerOf = (connection: DatabaseConnection): DatabaseConnection =>
  connection instanceof TranslatingConnection ? connection.inner : connection;

class TranslatingDriver implements Driver {
  constructor(private readonly inner: Driver, private readonly dialect: DialectName) {}

  init = () => translated(this.dialect, () => this.inner.init());
  acquireConnection = async () => new TranslatingConnection(await translated(this.dialect, () => this.inner.acquireConnection()), this.dialect);
  beginTransaction = (c: DatabaseConnection, settings: TransactionSettings) =>
    translated(this.dialect, () => this.inner.beginTransaction(innerOf(c), settings));
  commitTransaction = (c: DatabaseConnection) => translated(this.dialect, () => this.inner.commitTransaction(innerOf(c)));
  rollbackTransaction = (c: DatabaseConnection) => translated(this.dialect, async () => {
    try {
      await this.inner.rollbackTransaction(innerOf(c));
    } catch (err) {
      // SQLite rolls a transaction back by itself on some errors (SQLITE_FULL, SQLITE_IOERR, …).
      // Its own rollback then finds nothing to undo; the error that caused it is the one to report.
      if (this.dialect === 'sqlite' && /no transaction is active/.test(messageOf(err))) return;
      throw err;
    }
  });
  releaseConnection = (c: DatabaseConnection) => this.inner.releaseConnection(innerOf(c));
  destroy = () => this.inner.destroy();
}

/** Wraps a Kysely dialect so that every query's driver error is translated at the store's edge. */
export function translatingDialect(inner: KyselyDialect, dialect: DialectName): KyselyDialect {
  return {
    createDriver: () => new TranslatingDriver(inner.createDriver(), dialect),
    createQueryCompiler: () => inner.createQueryCompiler(),
    createAdapter: () => inner.createAdapter(),
    createIntrospector: (db) => inner.createIntrospector(db),
  };
}
