import { type ChildProcess, spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The real service as a child process (`node packages/server/dist/main.js`, what `npm start`
 * runs; the run's global setup builds it first), for the few things only a process shows:
 * start-up from the environment, secrets in DATA_DIR, signals. Ports are 0, so parallel runs
 * never collide; the addresses come from the "corral started" log.
 */
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

/** The built service's entry point, relative to the repository root. */
export const SERVER_MAIN = 'packages/server/dist/main.js';

export interface ServerProcess {
  child: ChildProcess;
  api: string;
  ingest: string;
  /** host:port of the OTLP/gRPC listener, when OTLP_GRPC_PORT turned it on. */
  otlpGrpc: string | undefined;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

// Variables the test runner's own environment might carry into the child.
const inherited = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'NODE_OPTIONS'];

export async function startServerProcess(env: Record<string, string>, readyTimeoutMs = 90_000): Promise<ServerProcess> {
  // OTLP/gRPC is off unless a test asks for it: 4317 may be taken, and 0 means off there.
  const childEnv: Record<string, string> = { PORT: '0', INGEST_PORT: '0', OTLP_GRPC_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env };
  for (const name of inherited) if (process.env[name] !== undefined) childEnv[name] ??= process.env[name];
  const child = spawn(process.execPath, [SERVER_MAIN], {
    cwd: repoRoot,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );

  const started = await new Promise<{ api: string; ingest: string; otlpGrpc: string | undefined }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${output}`)), readyTimeoutMs);
    const look = () => {
      for (const line of output.split('\n')) {
        if (!line.includes('corral started')) continue;
        const { api, ingest, otlpGrpc } = JSON.parse(line) as { api?: string; ingest?: string; otlpGrpc?: string };
        if (api && ingest) {
          clearTimeout(timer);
          resolve({ api, ingest, otlpGrpc });
        }
      }
    };
    child.stdout?.on('data', look);
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`service exited (${code}) before it started:\n${output}`));
    });
  });

  return {
    child,
    ...started,
    output: () => output,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

export interface HttpAnswer {
  status: number;
  body: string;
}

/** One HTTP request over a fresh socket (never a pooled one, so a closed listener shows). */
export function httpCall(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: opts.method ?? 'GET', headers: opts.headers, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** Whether the address still accepts connections. */
export function accepts(url: string): Promise<boolean> {
  return httpCall(`${url}/healthz`).then(
    () => true,
    () => false,
  );
}
