import { describe, expect, it } from 'vitest';
import { createTestLogger } from '../../test/helpers/test-logger.js';
import { startWorkers, stopWorkers, type Worker } from './lifecycle.js';

function recorder(names: string[], failOn: { start?: string; stop?: string } = {}) {
  const events: string[] = [];
  const workers: Worker[] = names.map((name) => ({
    name,
    kind: 'resource',
    async start() {
      if (failOn.start === name) throw new Error(`${name} cannot start`);
      events.push(`start ${name}`);
    },
    async stop() {
      events.push(`stop ${name}`);
      if (failOn.stop === name) throw new Error(`${name} cannot stop`);
    },
  }));
  return { events, workers };
}

describe('worker lifecycle', () => {
  it('starts in order and stops in reverse order', async () => {
    const { events, workers } = recorder(['bus', 'hub', 'writer']);
    const log = createTestLogger();
    await startWorkers(workers, log);
    expect(await stopWorkers(workers, log)).toBe(true);
    expect(events).toEqual(['start bus', 'start hub', 'start writer', 'stop writer', 'stop hub', 'stop bus']);
  });

  it('stops the started ones when one fails to start, and rethrows', async () => {
    const { events, workers } = recorder(['bus', 'hub', 'writer'], { start: 'writer' });
    await expect(startWorkers(workers, createTestLogger())).rejects.toThrow('writer cannot start');
    expect(events).toEqual(['start bus', 'start hub', 'stop hub', 'stop bus']);
  });

  it('logs a worker that fails to stop, still stops the others, and says the stop was not clean', async () => {
    const { events, workers } = recorder(['bus', 'hub', 'writer'], { stop: 'hub' });
    const log = createTestLogger();
    expect(await stopWorkers(workers, log)).toBe(false);
    expect(events).toEqual(['stop writer', 'stop hub', 'stop bus']);
    expect(log.entries).toEqual([expect.objectContaining({ level: 'error', obj: expect.objectContaining({ worker: 'hub' }) })]);
  });
});
