import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
/**
 * The built binary (packages/cli/dist/main.js, what `corral` runs once installed), with plain
 * node: what users run, and without transpiling the sources at every start. Test files call
 * `buildCli()` first, so it is never stale.
 */
const builtMain = path.join(repoRoot, 'packages/cli/dist/main.js');
const nodeArgs = [builtMain];

/** Variables the service reads; the caller's own settings must not leak into a test's process. */
const serviceVariable = /^(PORT|INGEST_PORT|OTLP_GRPC_PORT|HOST|DATA_DIR|DATABASE_URL|DATABASE_POOL_SIZE|LOG_LEVEL|CORRAL_.*)$/;

function processEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([key]) => !serviceVariable.test(key)));
  return { ...clean, ...env };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, ...args], { cwd: repoRoot, env: processEnv(env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface RunningCli {
  /** Resolves with the bound addresses once the process logs that it serves. */
  ready: Promise<{ apiUrl: string; ingestUrl: string }>;
  /** Sends SIGTERM and resolves with the exit code; safe to call at any time, and twice. */
  stop(): Promise<number | null>;
}

/**
 * `corral start` on ports the system picks. The handle comes back before the process is ready,
 * so a caller can register `stop` for clean-up first: a start that never gets ready must not
 * leave a server running after the test.
 */
export function startCli(env: Record<string, string>): RunningCli {
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, 'start'], {
    cwd: repoRoot,
    env: processEnv({ PORT: '0', INGEST_PORT: '0', OTLP_GRPC_PORT: '0', ...env }),
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const ready = new Promise<{ apiUrl: string; ingestUrl: string }>((resolve, reject) => {
    let buffered = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        let entry: { msg?: string; api?: string; ingest?: string };
        try {
          entry = JSON.parse(line) as typeof entry;
        } catch {
          continue;
        }
        if (entry.msg === 'corral started' && entry.api && entry.ingest) resolve({ apiUrl: entry.api, ingestUrl: entry.ingest });
      }
    });
    void exited.then((code) => reject(new Error(`corral start exited with ${code}: ${stderr}`)));
  });
  return {
    ready,
    stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

export interface TestStore {
  /** Environment that points the CLI (and a server) at this store. */
  env: Record<string, string>;
  dataDir: string;
  close(): Promise<void>;
}

/** An empty store: a fresh DATA_DIR, plus a fresh schema in the run's database for PostgreSQL. */
export async function createStore(dialect: 'sqlite' | 'postgres', pgUrl: string | null): Promise<TestStore> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'corral-cli-'));
  const removeDir = () => rmSync(dataDir, { recursive: true, force: true });
  if (dialect === 'sqlite') return { env: { DATA_DIR: dataDir }, dataDir, close: async () => removeDir() };
  if (!pgUrl) throw new Error('PostgreSQL is not available in this run');
  const schema = `cli_${Math.random().toString(36).slice(2, 10)}`;
  const query = async (sql: string) => {
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await query(`CREATE SCHEMA ${schema}`);
  const url = new URL(pgUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    env: { DATA_DIR: dataDir, DATABASE_URL: url.toString() },
    dataDir,
    async close() {
      await query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      removeDir();
    },
  };
}

/** The claims of a JWT, read without verifying it. */
export function claimsOf(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** Brings dist/ up to date (tsc -b is incremental: quick when nothing changed). */
export function buildCli(): void {
  execFileSync(process.execPath, [path.join(repoRoot, 'node_modules/typescript/bin/tsc'), '-b', 'packages/cli'], { cwd: repoRoot, stdio: 'pipe' });
}

export function runBuiltCli(args: string[], env: Record<string, string> = {}, input?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [builtMain, ...args], { cwd: repoRoot, env: processEnv(env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}

export interface LongRunningCli {
  /** Everything printed so far. */
  stdout(): string;
  /** Resolves once stdout matches, or rejects after the timeout with what was printed. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  stop(): Promise<number | null>;
}

/** A command that runs until stopped (`events tail`). */
export function spawnBuiltCli(args: string[], env: Record<string, string> = {}): LongRunningCli {
  const child = spawn(process.execPath, [builtMain, ...args], { cwd: repoRoot, env: processEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return {
    stdout: () => stdout,
    async waitFor(pattern, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(stdout)) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no ${String(pattern)} in:\n${stdout}\n${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
