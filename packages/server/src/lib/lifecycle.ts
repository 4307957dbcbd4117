import type { Logger } from './logger.js';

/**
 * Something with a life of its own between start-up and shutdown: a connection it holds, a
 * thread, a timer. The composition root creates them, the service starts them in order before
 * it listens and stops them in reverse order after the listeners have closed.
 *
 * - `resource`: runs in every process that composes it (the control bus, the stream hub, the
 *   SQLite writer thread); these start lazily on first use, and `start` only prepares.
 * - `job`: does work on its own schedule (retention); only processes whose role runs
 *   background work start it.
 * - `listener`: serves a port of the ingest role besides the ingest host (the OTLP/gRPC server);
 *   only processes whose role serves ingest start it.
 */
export interface Worker {
  readonly name: string;
  readonly kind: 'resource' | 'job' | 'listener';
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts workers in order; a failure stops the ones already started, in reverse, and rethrows. */
export async function startWorkers(workers: readonly Worker[], log: Logger): Promise<void> {
  const started: Worker[] = [];
  try {
    for (const worker of workers) {
      await worker.start();
      started.push(worker);
    }
  } catch (err) {
    await stopWorkers(started, log);
    throw err;
  }
}

/** Stops workers in reverse order. A worker that fails to stop is logged and the rest still stop. */
export async function stopWorkers(workers: readonly Worker[], log: Logger): Promise<boolean> {
  let clean = true;
  for (const worker of [...workers].reverse()) {
    try {
      await worker.stop();
    } catch (err) {
      clean = false;
      log.error({ err, worker: worker.name }, 'worker did not stop cleanly');
    }
  }
  return clean;
}
