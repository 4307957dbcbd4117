/**
 * Preloaded into the server by `control-fanout` (with --expose-gc): on SIGUSR2 it collects
 * garbage and writes the process's memory to BENCH_MEMORY_FILE, so memory per stream is measured
 * on live objects rather than on whatever the collector has not reached yet.
 */
import { writeFileSync } from 'node:fs';

const file = process.env.BENCH_MEMORY_FILE;
const gc = (globalThis as { gc?: () => void }).gc;
if (file && gc) {
  process.on('SIGUSR2', () => {
    gc();
    gc();
    writeFileSync(file, JSON.stringify(process.memoryUsage()));
  });
}
