import type { Worker as Thread } from 'node:worker_threads';
import type { SqliteDb } from '../../db/database.js';
import { translateStoreError } from '../../db/translate-error.js';
import type { Worker } from '../../lib/lifecycle.js';
import { startModuleWorker } from '../../lib/module-worker.js';
import type { EventRow } from './rollup-fold.js';
import { prepareSqliteBatchWrite } from './telemetry-sqlite-batch.js';
import type { WriterReply, WriterRequest } from './telemetry-sqlite-worker.js';
import type { TelemetryWriter } from './telemetry-writer.js';

/**
 * SQLite's writer. For a database file, batches are stored by a writer thread with its own
 * connection (telemetry-sqlite-worker.ts): a 1,000-event transaction takes milliseconds of
 * B-tree work, and on the writer thread it no longer stalls every other request, while the main
 * thread parses and validates the next batch. An in-memory database cannot be shared with
 * another thread, so there the same transaction runs in this thread, holding Kysely's single
 * connection so that no other query interleaves.
 */
export function createSqliteTelemetryWriter(db: SqliteDb): TelemetryWriter & Worker {
  if (db.file !== ':memory:') return createWriterThread(db.file);
  let write: ((rows: readonly EventRow[]) => number[]) | undefined;
  return {
    name: 'telemetry-sqlite-writer',
    kind: 'resource',
    start: () => Promise.resolve(),
    stop: () => Promise.resolve(),
    async write(rows) {
      // Prepared on first use: the tables exist only once migrations have run.
      const stored = await db.kysely.connection().execute(async () => {
        try {
          return (write ??= prepareSqliteBatchWrite(db.sqlite))(rows);
        } catch (err) {
          throw translateStoreError('sqlite', err);
        }
      });
      return stored.map((i) => rows[i]!);
    },
  };
}

interface Pending {
  rows: readonly EventRow[];
  resolve(rows: EventRow[]): void;
  reject(err: unknown): void;
}

/** The driver's error from the writer thread, code included, translated like any store error. */
function driverError(error: { message: string; code: string | undefined }): unknown {
  return translateStoreError('sqlite', Object.assign(new Error(error.message), error.code === undefined ? {} : { code: error.code }));
}

/**
 * The client side of the writer thread: one message per batch, answered in order with the
 * indexes of the rows stored. The thread starts on the first batch, keeps the process alive only
 * while batches are in flight, and is started again if it ever dies.
 */
function createWriterThread(file: string): TelemetryWriter & Worker {
  let worker: Thread | undefined;
  let isStopped = false;
  let nextId = 1;
  const pending = new Map<number, Pending>();

  function failAll(err: unknown): void {
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  }

  function start(): Thread {
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
    if (isStopped && !('close' in request)) return Promise.reject(new Error('The telemetry writer has stopped'));
    const w = (worker ??= start());
    w.ref();
    return new Promise<EventRow[]>((resolve, reject) => {
      pending.set(request.id, { rows, resolve, reject });
      w.postMessage(request);
    });
  }

  return {
    name: 'telemetry-sqlite-writer',
    kind: 'resource',
    // The thread starts with the first batch, so a process that never ingests holds none.
    start: () => Promise.resolve(),
    write: (rows) => (rows.length === 0 ? Promise.resolve([]) : send({ id: nextId++, rows: rows as EventRow[] }, rows)),

    /** Waits for the batches in flight (they are ahead of it in the queue), then stops the thread. */
    async stop() {
      isStopped = true;
      const w = worker;
      if (!w) return;
      const exited = new Promise((resolve) => w.once('exit', resolve));
      await send({ id: nextId++, close: true }, []);
      await exited;
    },
  };
}
