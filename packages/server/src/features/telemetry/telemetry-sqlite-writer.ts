import type { Worker } from 'node:worker_threads';
import type { Db } from '../../db/database.js';
import { startModuleWorker } from '../../lib/module-worker.js';
import type { EventRow } from './rollup-fold.js';
import { prepareSqliteBatchWrite } from './telemetry-sqlite-batch.js';
import type { WriterReply, WriterRequest } from './telemetry-sqlite-worker.js';
import type { TelemetryWriter } from './telemetry-store.js';

/**
 * SQLite's writer. For a database file, batches are stored by a writer thread with its own
 * connection (telemetry-sqlite-worker.ts): a 1,000-event transaction takes milliseconds of
 * B-tree work, and on the writer thread it no longer stalls every other request, while the main
 * thread parses and validates the next batch. An in-memory database cannot be shared with
 * another thread, so there the same transaction runs in this thread, holding Kysely's single
 * connection so that no other query interleaves.
 */
export function createSqliteTelemetryWriter(db: Db): TelemetryWriter {
  const sqlite = db.sqlite;
  if (!sqlite || db.sqlitePath === undefined) throw new Error('The SQLite telemetry writer needs the better-sqlite3 handle');
  if (db.sqlitePath !== ':memory:') {
    const writer = createWriterThread(db.sqlitePath);
    db.beforeClose(() => writer.close());
    return writer;
  }
  let write: ((rows: readonly EventRow[]) => number[]) | undefined;
  return {
    async write(rows) {
      // Prepared on first use: the tables exist only once migrations have run.
      const stored = await db.kysely.connection().execute(async () => (write ??= prepareSqliteBatchWrite(sqlite))(rows));
      return stored.map((i) => rows[i]!);
    },
  };
}

interface Pending {
  rows: readonly EventRow[];
  resolve(rows: EventRow[]): void;
  reject(err: Error): void;
}

/** Error as the driver raised it on the writer thread, code included (store error translation reads it). */
function driverError(error: { message: string; code: string | undefined }): Error {
  return Object.assign(new Error(error.message), error.code === undefined ? {} : { code: error.code });
}

/**
 * The client side of the writer thread: one message per batch, answered in order with the
 * indexes of the rows stored. The thread starts on the first batch, keeps the process alive only
 * while batches are in flight, and is started again if it ever dies.
 */
function createWriterThread(file: string): TelemetryWriter & { close(): Promise<void> } {
  let worker: Worker | undefined;
  let nextId = 1;
  const pending = new Map<number, Pending>();

  function failAll(err: Error): void {
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  }

  function start(): Worker {
    const w = startModuleWorker(import.meta.url, './telemetry-sqlite-worker', { file });
    w.on('message', (reply: WriterReply) => {
      const p = pending.get(reply.id);
      if (!p) return;
      pending.delete(reply.id);
      if (pending.size === 0) w.unref();
      if ('error' in reply) p.reject(driverError(reply.error));
      else p.resolve(reply.stored.map((i) => p.rows[i]!));
    });
    w.on('error', (err) => failAll(err));
    w.on('exit', () => {
      if (worker === w) worker = undefined;
      failAll(new Error('The telemetry writer thread stopped'));
    });
    return w;
  }

  function send(request: WriterRequest, rows: readonly EventRow[]): Promise<EventRow[]> {
    const w = (worker ??= start());
    w.ref();
    return new Promise<EventRow[]>((resolve, reject) => {
      pending.set(request.id, { rows, resolve, reject });
      w.postMessage(request);
    });
  }

  return {
    write: (rows) => (rows.length === 0 ? Promise.resolve([]) : send({ id: nextId++, rows: rows as EventRow[] }, rows)),

    /** Waits for the batches in flight (they are ahead of it in the queue), then stops the thread. */
    async close() {
      const w = worker;
      if (!w) return;
      const exited = new Promise((resolve) => w.once('exit', resolve));
      await send({ id: nextId++, close: true }, []);
      await exited;
    },
  };
}
