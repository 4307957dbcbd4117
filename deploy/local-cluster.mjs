#!/usr/bin/env node
/*
 * Starts the scale-out shape on one machine: N `api`, M `ingest` and W `worker` processes of
 * Corral on one PostgreSQL, each with its own DATA_DIR (nothing is shared through the disk),
 * all with the same secrets. Prints one JSON line when every process serves:
 *
 *   {"ready":true,"api":["http://127.0.0.1:8080",…],"ingest":["http://127.0.0.1:4318",…],
 *    "otlp_grpc":["127.0.0.1:4317",…],"processes":[{"role":"api","pid":…,"url":…,"log":…},…],
 *    "secrets":"…/cluster.env"}
 *
 * Stops every process with SIGTERM on SIGTERM or SIGINT, and exits 0 when all stopped cleanly.
 * One process that exits on its own stops the cluster (exit 1), unless --keep-going is given.
 *
 *   DATABASE_URL=postgres://… node deploy/local-cluster.mjs --api 2 --ingest 1 --workers 1
 *
 * Options: --api N (2), --ingest M (1), --workers W (1), --port P (8080; api i listens on P+i,
 * 0 lets the system pick), --ingest-port P (4318, likewise; ingest i serves OTLP/gRPC on
 * OTLP_GRPC_PORT+i, 4317 by default, and with --ingest-port 0 only when OTLP_GRPC_PORT is set), --dir DIR (data and logs; a new
 * temporary folder by default), --from-source (run packages/cli/src with tsx instead of the
 * built packages/cli/dist), --keep-going. CORRAL_JWT_SECRET, CORRAL_SIGNING_KEY and
 * CORRAL_ENCRYPTION_KEY are taken from the environment, or generated once into DIR/cluster.env.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: opts } = parseArgs({
  options: {
    api: { type: 'string', default: '2' },
    ingest: { type: 'string', default: '1' },
    workers: { type: 'string', default: '1' },
    port: { type: 'string', default: '8080' },
    'ingest-port': { type: 'string', default: '4318' },
    dir: { type: 'string' },
    'from-source': { type: 'boolean', default: false },
    'keep-going': { type: 'boolean', default: false },
  },
});

function count(name, min) {
  const n = Number(opts[name]);
  if (!Number.isInteger(n) || n < min) fail(`--${name} must be a whole number of at least ${min}, got "${opts[name]}"`);
  return n;
}
function fail(message) {
  process.stderr.write(`local-cluster: ${message}\n`);
  process.exit(2);
}

if (!process.env.DATABASE_URL) fail('DATABASE_URL must point at the PostgreSQL every process shares');
const shape = { api: count('api', 0), ingest: count('ingest', 0), worker: count('workers', 0) };
const [port, ingestPort] = [count('port', 0), count('ingest-port', 0)];
const dir = path.resolve(opts.dir ?? mkdtempSync(path.join(tmpdir(), 'corral-cluster-')));
mkdirSync(dir, { recursive: true });

/** The secrets every process must share (docs/deployment.md): given, or generated once. */
function sharedSecrets() {
  const file = path.join(dir, 'cluster.env');
  if (!existsSync(file)) {
    const generated = {
      CORRAL_JWT_SECRET: randomBytes(32).toString('hex'),
      // An Ed25519 seed: 32 random bytes.
      CORRAL_SIGNING_KEY: randomBytes(32).toString('hex'),
      CORRAL_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    };
    writeFileSync(file, Object.entries(generated).map(([k, v]) => `${k}=${v}\n`).join(''), { mode: 0o600 });
  }
  const fromFile = Object.fromEntries(
    readFileSync(file, 'utf8').split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  const pick = (name) => process.env[name] || fromFile[name];
  return { file, env: { CORRAL_JWT_SECRET: pick('CORRAL_JWT_SECRET'), CORRAL_SIGNING_KEY: pick('CORRAL_SIGNING_KEY'), CORRAL_ENCRYPTION_KEY: pick('CORRAL_ENCRYPTION_KEY') } };
}
const secrets = sharedSecrets();

const cli = opts['from-source']
  ? ['--conditions=source', '--import', 'tsx', path.join(repoRoot, 'packages/cli/src/main.ts')]
  : [path.join(repoRoot, 'packages/cli/dist/main.js')];

const otlpGrpcGiven = process.env.OTLP_GRPC_PORT !== undefined && process.env.OTLP_GRPC_PORT !== '';
const otlpGrpcPort = Number(otlpGrpcGiven ? process.env.OTLP_GRPC_PORT : 4317);
const children = [];
let stopping = false;

function startOne(role, index) {
  const name = `${role}-${index + 1}`;
  const dataDir = path.join(dir, name);
  mkdirSync(dataDir, { recursive: true });
  const logFile = path.join(dir, `${name}.log`);
  const log = createWriteStream(logFile, { flags: 'a' });
  const env = {
    ...process.env, ...secrets.env, DATA_DIR: dataDir, HOST: process.env.HOST || '127.0.0.1', LOG_LEVEL: process.env.LOG_LEVEL || 'info',
    PORT: String(role === 'api' && port !== 0 ? port + index : 0),
    INGEST_PORT: String(role === 'ingest' && ingestPort !== 0 ? ingestPort + index : 0),
    // Each ingest process has its own OTLP/gRPC port after the first (4317 unless OTLP_GRPC_PORT
    // says otherwise). With ephemeral ingest ports, only when OTLP_GRPC_PORT is given.
    OTLP_GRPC_PORT: String(role === 'ingest' && otlpGrpcPort !== 0 && (ingestPort !== 0 || otlpGrpcGiven) ? otlpGrpcPort + index : 0),
  };
  const child = spawn(process.execPath, [...cli, 'start', '--role', role], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const entry = { name, role, pid: child.pid, url: undefined, otlpGrpc: undefined, log: logFile, child };
  children.push(entry);
  const ready = new Promise((resolve, reject) => {
    let pending = '';
    child.stdout.on('data', (chunk) => {
      log.write(chunk);
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.includes('"corral started"')) continue;
        const started = JSON.parse(line);
        entry.url = role === 'ingest' ? started.ingest : started.api;
        entry.otlpGrpc = started.otlpGrpc;
        resolve();
      }
    });
    child.stderr.on('data', (chunk) => log.write(chunk));
    child.once('exit', (code, signal) => {
      reject(new Error(`${name} exited (${code ?? signal}) before it served; see ${logFile}`));
      if (!stopping && !opts['keep-going']) {
        process.stderr.write(`local-cluster: ${name} exited (${code ?? signal}); stopping the cluster\n`);
        void stopAll(1);
      }
    });
  });
  return ready;
}

async function stopAll(exitCode) {
  if (stopping) return;
  stopping = true;
  const exits = children.map(({ child }) =>
    child.exitCode !== null || child.signalCode !== null ? Promise.resolve(child.exitCode) : new Promise((resolve) => {
      child.once('exit', (code) => resolve(code));
      child.kill('SIGTERM');
    }));
  const codes = await Promise.all(exits);
  process.exit(exitCode !== 0 ? exitCode : codes.every((c) => c === 0) ? 0 : 1);
}
process.once('SIGTERM', () => void stopAll(0));
process.once('SIGINT', () => void stopAll(0));

// All at once: each process migrates on start under a lock, so simultaneous starts are safe.
const starting = [];
for (const role of ['worker', 'api', 'ingest']) for (let i = 0; i < shape[role]; i++) starting.push(startOne(role, i));
try {
  await Promise.all(starting);
} catch (err) {
  process.stderr.write(`local-cluster: ${err.message}\n`);
  await stopAll(1);
}
const urls = (role) => children.filter((c) => c.role === role).map((c) => c.url);
process.stdout.write(`${JSON.stringify({
  ready: true, api: urls('api'), ingest: urls('ingest'), otlp_grpc: children.flatMap((c) => (c.otlpGrpc ? [c.otlpGrpc] : [])), secrets: secrets.file,
  processes: children.map(({ name, role, pid, url, otlpGrpc, log }) => ({ name, role, pid, url, otlp_grpc: otlpGrpc, log })),
})}\n`);
