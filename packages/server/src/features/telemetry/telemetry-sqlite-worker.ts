/**
 * The SQLite telemetry writer thread (see telemetry-sqlite-writer.ts): owns its own connection
 * to the database file and runs one batch transaction per message, in arrival order.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openSqlite } from '../../db/sqlite-connection.js';
import type { EventRow } from './rollup-fold.js';
import { prepareSqliteBatchWrite } from './telemetry-sqlite-batch.js';

export type WriterRequest = { id: number; rows: EventRow[] } | { id: number; close: true };
export type WriterReply = { id: number; stored: number[] } | { id: number; error: { message: string; code: string | undefined } };

if (parentPort) {
  const port = parentPort;
  const sqlite = openSqlite((workerData as { file: string }).file);
  let write: ((rows: readonly EventRow[]) => number[]) | undefined;
  port.on('message', (request: WriterRequest) => {
    if ('close' in request) {
      sqlite.close();
      port.postMessage({ id: request.id, stored: [] } satisfies WriterReply);
      port.close();
      return;
    }
    let reply: WriterReply;
    try {
      write ??= prepareSqliteBatchWrite(sqlite);
      reply = { id: request.id, stored: write(request.rows) };
    } catch (err) {
      const e = err as { message?: unknown; code?: unknown };
      reply = { id: request.id, error: { message: String(e.message ?? err), code: typeof e.code === 'string' ? e.code : undefined } };
    }
    port.postMessage(reply);
  });
}
