import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { accepts } from './helpers/server-process.js';

/*
 * The README's run command as a user runs it. npm runs the script through a shell, so a signal
 * sent to npm (a process manager's SIGTERM, a Ctrl-C delivered to npm alone) must reach the
 * server, or the server is left running without its parent.
 */
const repoRoot = path.resolve(import.meta.dirname, '../../..');
const dataDirs: string[] = [];

async function npmStart(): Promise<{ stop(signal: NodeJS.Signals): Promise<number | null>; api: string; ingest: string }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'corral-npm-start-'));
  dataDirs.push(dataDir);
  const child = spawn('npm', ['start', '--silent'], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: dataDir, PORT: '0', INGEST_PORT: '0', OTLP_GRPC_PORT: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const urls = await new Promise<{ api: string; ingest: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not start:\n${output}`)), 150_000);
    child.stdout.on('data', (c: Buffer) => {
      output += c.toString();
      const line = output.split('\n').find((l) => l.includes('corral started'));
      if (!line) return;
      clearTimeout(timer);
      resolve(JSON.parse(line) as { api: string; ingest: string });
    });
    void exited.then((code) => reject(new Error(`npm start exited (${code}):\n${output}`)));
  });
  return {
    ...urls,
    async stop(signal) {
      child.kill(signal);
      return exited;
    },
  };
}

describe('npm start', { timeout: 200_000 }, () => {
  afterAll(() => {
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`stops the server when npm gets ${signal}, leaving nothing running`, async () => {
      const service = await npmStart();
      expect(await accepts(service.api)).toBe(true);
      expect(await service.stop(signal)).toBe(0);
      expect(await accepts(service.api)).toBe(false);
      expect(await accepts(service.ingest)).toBe(false);
    });
  }
});
