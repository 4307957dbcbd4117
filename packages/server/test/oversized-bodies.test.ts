import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signJwt } from '../src/features/auth/index.js';
import { OVERSIZED_BODY_DRAIN_BYTES } from '../src/http/oversized-bodies.js';
import { httpCall, type ServerProcess, startServerProcess } from './helpers/server-process.js';

/*
 * A body over CORRAL_BODY_LIMIT_BYTES must end in a readable 413, not a reset, whatever the
 * client's upload speed: clients (Node's http, fetch) write the whole body before they read the
 * answer, so a server that closes while they are still sending leaves them with EPIPE or
 * ECONNRESET. Only a real process and real sockets show this; light-my-request never does.
 */
const MiB = 1024 * 1024;
const LIMIT = 5 * MiB; // the default body limit, which the process below runs with
const BODY = 40 * MiB;
const ROUNDS = 2;
/** Every body's bytes: JSON whitespace, never parsed anyway. */
const filler = Buffer.alloc(BODY, 0x20);

interface Target {
  host: 'api' | 'ingest';
  path: string;
  headers: Record<string, string>;
}

interface Outcome {
  status: number | undefined;
  body: string;
  /** The socket error the client saw (EPIPE, ECONNRESET...), if any. */
  error: string | undefined;
  /** Body bytes handed to the socket before it closed or the body was all written. */
  written: number;
}

/** An event as a promise; unlike events.once, an 'error' on the way does not reject it. */
const when = (emitter: NodeJS.EventEmitter, name: string) => new Promise<void>((resolve) => emitter.once(name, () => resolve()));

/** Splits a raw HTTP/1.1 answer (Content-Length or chunked) into status and body. */
function parseAnswer(raw: Buffer): { status: number | undefined; body: string } {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return { status: undefined, body: '' };
  const head = raw.subarray(0, end).toString('latin1');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]) || undefined;
  let rest = raw.subarray(end + 4);
  if (!/\r\ntransfer-encoding:\s*chunked/i.test(head)) return { status, body: rest.toString('utf8') };
  const parts: Buffer[] = [];
  for (;;) {
    const line = rest.indexOf('\r\n');
    const size = line < 0 ? 0 : parseInt(rest.subarray(0, line).toString('latin1'), 16);
    if (!size) break;
    parts.push(rest.subarray(line + 2, line + 2 + size));
    rest = rest.subarray(line + 4 + size);
  }
  return { status, body: Buffer.concat(parts).toString('utf8') };
}

/**
 * POSTs `size` body bytes over a fresh socket, the way clients do: the whole body first, the
 * answer after (the answer is collected as it arrives, but nothing stops sending on it).
 * `fast` hands the body over in one write; `slow` trickles it in 256 KiB pieces with pauses, so
 * the refusal arrives mid-upload; `steady` writes 1 MiB pieces as fast as the socket takes them,
 * so `written` follows what the server took. `chunked` sends no Content-Length.
 */
async function upload(
  base: string,
  target: Target,
  opts: { size: number; pace: 'fast' | 'slow' | 'steady'; chunked: boolean; declared?: number },
): Promise<Outcome> {
  const url = new URL(base);
  // Half-open allowed: like Node's http client, it goes on sending after the server's FIN.
  const socket = net.connect({ host: url.hostname, port: Number(url.port), allowHalfOpen: true });
  const received: Buffer[] = [];
  let error: string | undefined;
  socket.on('data', (chunk: Buffer) => received.push(chunk));
  socket.on('error', (err: NodeJS.ErrnoException) => (error ??= err.code ?? err.message));
  const closed = when(socket, 'close');
  await Promise.race([when(socket, 'connect'), closed]);

  const length = opts.chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${opts.declared ?? opts.size}`;
  const headers = Object.entries(target.headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  socket.write(`POST ${target.path} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\n${headers}${length}\r\n\r\n`);

  const piece = { fast: opts.size, slow: 256 * 1024, steady: MiB }[opts.pace];
  if (piece > filler.length) throw new Error('a piece is at most the filler');
  // The server closes after its answer (Connection: close): once the body is out, so do we. A
  // FIN that comes earlier does not stop the sending, as it does not stop real clients.
  let sent = false;
  let peerEnded = false;
  socket.once('end', () => {
    peerEnded = true;
    if (sent) socket.end();
  });
  let written = 0;
  while (written < opts.size && !socket.destroyed) {
    const n = Math.min(piece, opts.size - written);
    if (opts.chunked) socket.write(`${n.toString(16)}\r\n`);
    const took = socket.write(filler.subarray(0, n));
    const ok = opts.chunked ? socket.write('\r\n') && took : took;
    written += n;
    if (!ok) await Promise.race([when(socket, 'drain'), closed]);
    if (opts.pace === 'slow') await sleep(1);
  }
  if (opts.chunked && !socket.destroyed) socket.write('0\r\n\r\n');
  sent = true;
  if (peerEnded) socket.end();

  const timer = setTimeout(() => socket.destroy(new Error('no answer within 20 s')), 20_000);
  await closed;
  clearTimeout(timer);
  return { ...parseAnswer(Buffer.concat(received)), error, written };
}

/** The same through Node's own http client (agent: false, so it asks for Connection: close). */
function nodeClientUpload(base: string, target: Target, size: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = httpRequest(`${base}${target.path}`, {
      method: 'POST',
      agent: false,
      headers: { ...target.headers, 'content-type': 'application/json', 'content-length': String(size) },
    });
    let status: number | undefined;
    let body = '';
    req.on('response', (res) => {
      status = res.statusCode;
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status, body, error: undefined, written: size }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ status, body, error: err.code ?? err.message, written: size }));
    req.end(filler.subarray(0, size));
  });
}

/** The same through fetch (undici). */
async function fetchUpload(base: string, target: Target, size: number): Promise<Outcome> {
  try {
    const res = await fetch(`${base}${target.path}`, {
      method: 'POST',
      headers: { ...target.headers, 'content-type': 'application/json' },
      body: filler.subarray(0, size),
    });
    return { status: res.status, body: await res.text(), error: undefined, written: size };
  } catch (err) {
    const cause = (err as { cause?: NodeJS.ErrnoException }).cause;
    return { status: undefined, body: '', error: cause?.code ?? String(err), written: size };
  }
}

function expectPayloadTooLarge(outcome: Outcome, what: string): void {
  expect({ error: outcome.error, status: outcome.status }, what).toEqual({ error: undefined, status: 413 });
  expect(JSON.parse(outcome.body), what).toEqual({
    error: { code: 'payload_too_large', message: 'Request body is too large', request_id: expect.any(String) },
  });
}

describe('a body over the limit', () => {
  let dataDir: string;
  let server: ServerProcess;
  let targets: Target[];
  const base = (t: Target) => (t.host === 'api' ? server.api : server.ingest);

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'corral-oversized-'));
    server = await startServerProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    const secret = readFileSync(path.join(dataDir, 'jwt-secret'), 'utf8').trim();
    const token = await signJwt(secret, { orgId: randomUUID(), role: 'owner', subject: 'ops' }, 600);
    const created = await httpCall(`${server.api}/v1/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'uploader', scope: { kind: 'all' } }),
    });
    expect(created.status, created.body).toBe(200);
    const { key } = JSON.parse(created.body) as { key: string };
    // Authenticated, so the refusal is the body parser's and not the auth hook's.
    targets = [
      { host: 'ingest', path: '/v1/telemetry', headers: { 'x-api-key': key } },
      { host: 'api', path: '/v1/agents', headers: { authorization: `Bearer ${token}` } },
    ];
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is answered 413 payload_too_large that the client reads, fast or slow, with or without Content-Length', { timeout: 120_000 }, async () => {
    // Each round sends every kind of upload to both hosts at once; any of them may fail alone.
    for (let round = 0; round < ROUNDS; round++) {
      const attempts = targets.flatMap((target) => [
        ...(['fast', 'slow'] as const).flatMap((pace) => [false, true].map((chunked) => ({
          what: `${target.path} ${pace} ${chunked ? 'chunked' : 'content-length'}`,
          outcome: upload(base(target), target, { size: BODY, pace, chunked }),
        }))),
        { what: `${target.path} node http`, outcome: nodeClientUpload(base(target), target, BODY) },
        { what: `${target.path} fetch`, outcome: fetchUpload(base(target), target, BODY) },
      ]);
      for (const { what, outcome } of attempts) {
        const answer = await outcome;
        expectPayloadTooLarge(answer, `${what}, round ${round}`);
        expect(answer.written, what).toBe(BODY);
      }
    }
  });

  it('is cut off past the drain cap instead of being read for ever, and the server keeps serving', { timeout: 60_000 }, async () => {
    for (const target of targets) {
      // Endless (chunked): read and thrown away up to the cap, then the connection is cut.
      const endless = await upload(base(target), target, { size: 1024 * MiB, pace: 'steady', chunked: true });
      expect(['ECONNRESET', 'EPIPE'], 'the server cut the upload off').toContain(endless.error);
      expect(endless.written, 'the server drained to the cap').toBeGreaterThan(LIMIT + OVERSIZED_BODY_DRAIN_BYTES);
      // What the client got to write: what the server read, and what the sockets' buffers held.
      expect(endless.written, 'the server stopped at the cap').toBeLessThan(LIMIT + OVERSIZED_BODY_DRAIN_BYTES + 32 * MiB);

      // Declared beyond the cap: answered and closed at once, nothing drained.
      const declared = await upload(base(target), target, { size: 256 * MiB, declared: 1024 * MiB, pace: 'steady', chunked: false });
      expect(declared.error).toBeDefined();
      expect(declared.written).toBeLessThan(32 * MiB);

      expect(await httpCall(`${base(target)}/healthz`)).toEqual({ status: 200, body: '{"status":"ok"}' });
      expectPayloadTooLarge(await upload(base(target), target, { size: BODY, pace: 'fast', chunked: false }), `${target.path} afterwards`);
    }
  });

  it('is still answered 413 just inside the drain cap', { timeout: 60_000 }, async () => {
    const [ingest] = targets;
    const size = LIMIT + OVERSIZED_BODY_DRAIN_BYTES - MiB;
    for (const chunked of [false, true]) {
      const outcome = await upload(server.ingest, ingest!, { size, pace: 'steady', chunked });
      expectPayloadTooLarge(outcome, chunked ? 'chunked' : 'content-length');
      expect(outcome.written).toBe(size);
    }
  });

  it('refused before its body is read (a bad key) is answered, drained to the same cap, then cut', { timeout: 60_000 }, async () => {
    const refused: Target[] = [
      { host: 'ingest', path: '/v1/telemetry', headers: { 'x-api-key': 'crl_live_not-a-real-key' } },
      { host: 'api', path: '/v1/agents', headers: { authorization: 'Bearer not.a.token' } },
    ];
    for (const target of refused) {
      // A body of ordinary size: the client reads its 401 as it would read a 413.
      const small = await upload(base(target), target, { size: MiB, pace: 'slow', chunked: true });
      expect({ error: small.error, status: small.status }, target.path).toEqual({ error: undefined, status: 401 });
      expect(JSON.parse(small.body)).toMatchObject({ error: { code: 'unauthorized' } });
      // An endless one is not read for ever: unauthenticated clients cannot keep the server reading.
      const endless = await upload(base(target), target, { size: 1024 * MiB, pace: 'steady', chunked: true });
      expect(['ECONNRESET', 'EPIPE'], `${target.path}: the server cut the upload off`).toContain(endless.error);
      expect(endless.written, target.path).toBeLessThan(LIMIT + OVERSIZED_BODY_DRAIN_BYTES + 32 * MiB);
      // Declared beyond the cap: answered and closed at once.
      const declared = await upload(base(target), target, { size: 256 * MiB, declared: 1024 * MiB, pace: 'steady', chunked: false });
      expect(declared.written, target.path).toBeLessThan(32 * MiB);
      expect(await httpCall(`${base(target)}/healthz`)).toEqual({ status: 200, body: '{"status":"ok"}' });
    }
  });
});
