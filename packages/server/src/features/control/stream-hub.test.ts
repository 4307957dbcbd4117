import Fastify, { type FastifyInstance } from 'fastify';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { openSse } from '../../http/sse.js';
import { formatEvent } from '../../lib/sse-message.js';
import { systemClock } from '../../lib/clock.js';
import { createStreamHub, type StreamHub } from './stream-hub.js';

/**
 * A real TCP client that speaks just enough HTTP/1.1 to hold a stream open, and can stop
 * reading. The stream's body runs until the server closes the connection.
 */
class RawClient {
  private raw = '';
  ended = false;
  readonly socket: net.Socket;
  constructor(port: number, path: string) {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.setEncoding('latin1');
    this.socket.on('data', (chunk: string) => void (this.raw += chunk));
    this.socket.on('close', () => void (this.ended = true));
    this.socket.on('error', () => undefined);
    this.socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n`);
  }

  get head(): string {
    const split = this.raw.indexOf('\r\n\r\n');
    return split < 0 ? this.raw : this.raw.slice(0, split);
  }
  get text(): string {
    const split = this.raw.indexOf('\r\n\r\n');
    return split < 0 ? '' : this.raw.slice(split + 4);
  }
}

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('SSE messages', () => {
  it('writes id, event and one data line per line of text', () => {
    expect(formatEvent({ event: 'kill_switch', id: 'abc', data: { active: true } })).toBe('id: abc\nevent: kill_switch\ndata: {"active":true}\n\n');
    expect(formatEvent({ event: 'note', data: 'one\ntwo\r\nthree' })).toBe('event: note\ndata: one\ndata: two\ndata: three\n\n');
  });

  it('refuses newlines in event names and ids, which would forge fields', () => {
    expect(() => formatEvent({ event: 'a\ndata: forged', data: 1 })).toThrow(/event names/);
    expect(() => formatEvent({ event: 'a', id: '1\r\nevent: b', data: 1 })).toThrow(/ids/);
    expect(() => formatEvent({ event: '', data: 1 })).toThrow();
  });
});

describe('stream hub', () => {
  let app: FastifyInstance;
  let hub: StreamHub;
  let port: number;
  const clients: RawClient[] = [];

  async function serve(heartbeatMs = 40): Promise<void> {
    hub = createStreamHub({ clock: systemClock, heartbeatMs });
    app = Fastify();
    app.get<{ Params: { agent: string }; Querystring: { key?: string; exp?: string } }>('/s/:agent', async (request, reply) => {
      const stream = openSse(request, reply, { retryMs: 1234 });
      hub.add({ orgId: 'org', agentId: request.params.agent, keyId: request.query.key, expiresAt: request.query.exp ? Number(request.query.exp) : undefined, stream });
      stream.send({ event: 'init', data: { ok: true } });
    });
    app.addHook('preClose', () => hub.stop());
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as net.AddressInfo).port;
  }

  afterEach(async () => {
    for (const c of clients.splice(0)) c.socket.destroy();
    await app?.close();
  });

  const connect = async (path: string) => {
    const client = new RawClient(port, path);
    clients.push(client);
    await until(() => client.text.includes('event: init'), 'init');
    return client;
  };

  it('sends headers, retry, and heartbeats from one shared timer; tears down on disconnect', async () => {
    await serve();
    const a = await connect('/s/one');
    const b = await connect('/s/one');
    const c = await connect('/s/two');
    expect(a.head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(a.head.toLowerCase()).toContain('content-type: text/event-stream');
    expect(a.head.toLowerCase()).toContain('cache-control: no-cache');
    expect(a.head.toLowerCase()).toContain('connection: close');
    expect(a.head.toLowerCase()).not.toContain('transfer-encoding');
    expect(a.text.startsWith('retry: 1234\n\nevent: init\n')).toBe(true);
    expect(hub.stats()).toMatchObject({ streams: 3, agents: 2, heartbeatTimers: 1 });
    await until(() => [a, b, c].every((x) => x.text.includes(': heartbeat\n\n')), 'heartbeats');

    for (const x of [a, b, c]) x.socket.destroy();
    await until(() => hub.stats().streams === 0, 'teardown');
    expect(hub.stats()).toMatchObject({ agents: 0, heartbeatTimers: 0 });
  });

  it('closes streams by agent, by key, and when their session expires', async () => {
    await serve();
    const byAgent = await connect('/s/gone');
    const byKey = await connect('/s/kept?key=k1');
    const other = await connect('/s/kept?key=k2');
    const expiring = await connect(`/s/kept?exp=${Date.now() - 1}`);
    expect(hub.closeAgent('org', 'gone')).toBe(1);
    expect(hub.closeKey('k1')).toBe(1);
    await until(() => byAgent.ended && byKey.ended && expiring.ended, 'streams to end');
    expect(other.ended).toBe(false);
    expect(hub.stats().streams).toBe(1);
  });

  it('holds at most the latest message per kind for a client that stops reading', async () => {
    await serve(60_000);
    const slow = await connect('/s/slow');
    slow.socket.pause();
    const group = hub.group('org', 'slow');
    if (!group) throw new Error('no group');
    const big = 'x'.repeat(64 * 1024);
    let maxBuffered = 0;
    let maxPending = 0;
    for (let i = 0; i < 400; i++) {
      const kind = i % 2 === 0 ? 'kill_switch' : 'policy_updated';
      hub.broadcast(group, kind, formatEvent({ event: kind, data: `${i}:${big}` }));
      const stats = hub.stats();
      maxBuffered = Math.max(maxBuffered, stats.bufferedBytes);
      maxPending = Math.max(maxPending, stats.pendingMessages);
      if (i % 50 === 0) await new Promise((r) => setTimeout(r, 5));
    }
    // 25 MB were offered; the server kept one socket buffer's worth plus one message per kind.
    expect(maxPending).toBe(2);
    expect(maxBuffered).toBeLessThan(16 * 1024 + 2 * (big.length + 100));

    slow.socket.resume();
    await until(() => slow.text.includes('data: 398:') && slow.text.includes('data: 399:'), 'the latest state after draining', 20_000);
  });

  it('disconnects a client that stays blocked for two heartbeats', async () => {
    await serve();
    const stuck = await connect('/s/stuck');
    stuck.socket.pause();
    const group = hub.group('org', 'stuck');
    if (!group) throw new Error('no group');
    const big = 'y'.repeat(256 * 1024);
    for (let i = 0; i < 60 && hub.stats().streams > 0; i++) {
      hub.broadcast(group, 'kill_switch', formatEvent({ event: 'kill_switch', data: big }));
      await new Promise((r) => setTimeout(r, 5));
    }
    await until(() => hub.stats().streams === 0, 'the stalled stream to be dropped');
    expect(hub.stats().heartbeatTimers).toBe(0);
  });

  it('ends every stream when the server closes', async () => {
    await serve();
    const a = await connect('/s/a');
    const b = await connect('/s/b');
    // Without the preClose hook, close() would wait for these streams forever.
    await app.close();
    expect(hub.stats().streams).toBe(0);
    await until(() => a.ended && b.ended, 'clients to see the end');
    expect(a.text).toContain('event: init');
  });
});
