import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * `deploy/local-cluster.mjs`, the script docs/deployment.md gives operators, run from the
 * sources: N api, M ingest and W worker processes of `corral start --role …` on one PostgreSQL.
 */
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

export interface ClusterProcess {
  readonly name: string;
  readonly role: 'api' | 'ingest' | 'worker';
  readonly pid: number;
  readonly url: string | undefined;
  /** The OTLP/gRPC address of an ingest process that serves it. */
  readonly otlp_grpc?: string | undefined;
  readonly log: string;
}

export interface LocalCluster {
  readonly api: string[];
  readonly ingest: string[];
  /** OTLP/gRPC addresses (`host:port`) of the ingest processes that serve it. */
  readonly otlp_grpc: string[];
  readonly processes: ClusterProcess[];
  readonly child: ChildProcess;
  output(): string;
  /** SIGTERM to the script, which stops every process; resolves with its exit code. */
  stop(): Promise<number | null>;
}

export async function startLocalCluster(
  shape: { api: number; ingest: number; workers: number; dir: string },
  env: Record<string, string>,
  readyTimeoutMs = 120_000,
): Promise<LocalCluster> {
  const args = ['deploy/local-cluster.mjs', '--api', String(shape.api), '--ingest', String(shape.ingest), '--workers', String(shape.workers),
    '--port', '0', '--ingest-port', '0', '--dir', shape.dir, '--from-source'];
  const inherited = Object.fromEntries(['PATH', 'HOME', 'TMPDIR', 'LANG'].flatMap((k) => (process.env[k] === undefined ? [] : [[k, process.env[k]]])));
  const child = spawn(process.execPath, args, { cwd: repoRoot, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = await new Promise<{ api: string[]; ingest: string[]; otlp_grpc: string[]; processes: ClusterProcess[] }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the cluster did not start:\n${output}`)), readyTimeoutMs);
    child.stdout?.on('data', () => {
      const line = output.split('\n').find((l) => l.startsWith('{"ready":true'));
      if (!line) return;
      clearTimeout(timer);
      resolve(JSON.parse(line) as { api: string[]; ingest: string[]; otlp_grpc: string[]; processes: ClusterProcess[] });
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the cluster script exited (${code}) before it was ready:\n${output}`));
    });
  });
  return {
    ...ready,
    child,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
