/**
 * The client side of `control-fanout`, run as its own process so the server's CPU and memory
 * are measured alone. Opens N control streams (one socket each), then on command flips the
 * kill switch and times, per stream, the arrival of the `kill_switch` event from just before
 * the POST is sent. Talks to the parent over the IPC channel.
 */
import http from 'node:http';
import net from 'node:net';
import { performance } from 'node:perf_hooks';

interface Args {
  base: string;
  agentId: string;
  apiKey: string;
  token: string;
  concurrency: number;
}

type Command = { cmd: 'open'; count: number } | { cmd: 'flip'; round: number; active: boolean } | { cmd: 'stop' };

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const url = new URL(`/v1/agents/${args.agentId}/control`, args.base);
const marker = 'event: kill_switch';

class Stream {
  initialized = false;
  ended = false;
  /** Arrival time of the kill_switch event in the current round. */
  arrivedAt = -1;
  private tail = '';
  constructor(private readonly onInit: () => void, private readonly onArrive: () => void) {}

  onData(chunk: string): void {
    const text = this.tail + chunk;
    if (!this.initialized && text.includes('event: init')) {
      this.initialized = true;
      this.onInit();
    }
    if (this.arrivedAt < 0 && text.includes(marker)) {
      this.arrivedAt = performance.now();
      this.onArrive();
    }
    // An event name split across two chunks is still found.
    this.tail = text.slice(-marker.length);
  }
}

const streams: Stream[] = [];
let initialized = 0;
let arrived = 0;
let onAllArrived: (() => void) | undefined;

// Raw sockets rather than an HTTP client: the body is close-delimited text, and a lean client
// keeps its own overhead out of the measured latency.
function open(): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = new Stream(
      () => {
        initialized++;
        resolve();
      },
      () => {
        if (++arrived === streams.length) onAllArrived?.();
      },
    );
    streams.push(stream);
    const socket = net.connect(Number(url.port), url.hostname);
    socket.setNoDelay(true);
    socket.setEncoding('utf8');
    let isFirst = true;
    socket.on('data', (chunk: string) => {
      if (isFirst && !chunk.startsWith('HTTP/1.1 200')) {
        reject(new Error(`stream refused: ${chunk.split('\r\n')[0]}`));
        socket.destroy();
      }
      isFirst = false;
      stream.onData(chunk);
    });
    socket.on('close', () => void (stream.ended = true));
    socket.on('error', reject);
    socket.write(`GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nX-API-Key: ${args.apiKey}\r\nAccept: text/event-stream\r\n\r\n`);
  });
}

async function openMore(count: number): Promise<void> {
  const started = performance.now();
  let left = count;
  const worker = async () => {
    while (left > 0) {
      left--;
      await open();
    }
  };
  await Promise.all(Array.from({ length: args.concurrency }, worker));
  process.send?.({ kind: 'opened', streams: initialized, seconds: (performance.now() - started) / 1000 });
}

function post(path: string, body: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = http.request(new URL(path, args.base), {
      method: 'POST',
      agent: false,
      headers: { authorization: `Bearer ${args.token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

async function flip(round: number, active: boolean): Promise<void> {
  for (const s of streams) s.arrivedAt = -1;
  arrived = 0;
  const done = new Promise<void>((resolve) => (onAllArrived = resolve));
  const t0 = performance.now();
  const status = await post(`/v1/agents/${args.agentId}/kill-switch`, { active, reason: `bench round ${round}` });
  const responded = performance.now() - t0;
  const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 60_000).unref());
  const outcome = await Promise.race([done, timeout]);
  const latencies = streams.filter((s) => s.arrivedAt >= 0).map((s) => s.arrivedAt - t0);
  process.send?.({ kind: 'round', round, status, responded, latencies, missing: streams.length - latencies.length, timedOut: outcome === 'timeout' });
}

process.on('message', (message: Command) => {
  if (message.cmd === 'open') {
    openMore(message.count).catch((err: unknown) => {
      process.send?.({ kind: 'error', message: String(err) });
      process.exit(1);
    });
  } else if (message.cmd === 'flip') {
    flip(message.round, message.active).catch((err: unknown) => process.send?.({ kind: 'error', message: String(err) }));
  } else {
    process.exit(0);
  }
});

