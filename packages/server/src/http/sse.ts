import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { Writable } from 'node:stream';
import { type EventStream, formatEvent, type SseMessage } from '../lib/sse-message.js';

/**
 * The one server-sent-events helper: features format a message once (lib/sse-message.ts) and hand
 * the bytes to any number of streams; each stream owns the backpressure rules below.
 *
 * Memory per slow client is bounded: while the socket's buffer is over its high-water mark,
 * a new message waits in `pending`, where a later message with the same key replaces an
 * earlier one. Control messages are state (the kill switch is on; version 7 is active), so
 * the latest of each kind is all a slow client needs. A client that stays blocked for
 * MAX_STALLED_HEARTBEATS heartbeats is disconnected; on reconnect it gets the full state.
 */
const MAX_STALLED_HEARTBEATS = 2;
const HEARTBEAT = Buffer.from(': heartbeat\n\n');

type Chunk = string | Buffer;

export class SseStream implements EventStream {
  private pending: Map<string, Chunk> | undefined;
  private isHeld: boolean;
  private isWaitingForDrain = false;
  private stalledHeartbeats = 0;
  private isClosed = false;
  /** Called once, however the stream ends (client gone, close(), shutdown). */
  onClosed: (() => void) | undefined;

  /**
   * @param res the response, which ends or drops the stream
   * @param out where messages go: the socket itself once the headers are out, which spares
   *   each message the response's own bookkeeping (the body is close-delimited, so the bytes
   *   on the socket are the body)
   */
  constructor(private readonly res: ServerResponse, private readonly out: Writable, held: boolean) {
    this.isHeld = held;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Bytes waiting in the socket's user-space buffer, and messages waiting behind it. */
  get buffered(): { bytes: number; messages: number } {
    return { bytes: this.out.writableLength, messages: this.pending?.size ?? 0 };
  }

  send(message: SseMessage): void {
    this.sendFormatted(message.event, formatEvent(message));
  }

  /** Sends a message made by formatEvent or encodeEvent; `key` says which waiting message it replaces. */
  sendFormatted(key: string, message: Chunk): void {
    if (this.isClosed) return;
    if (this.isHeld || this.out.writableNeedDrain) {
      (this.pending ??= new Map()).set(key, message);
      if (!this.isHeld) this.waitForDrain();
      return;
    }
    this.out.write(message);
  }

  /** Starts delivery after a hold: what arrived meanwhile follows the first message. */
  release(): void {
    this.isHeld = false;
    this.flush();
  }

  /** Writes the heartbeat comment, or counts a stall; a client stalled too long is cut off. */
  heartbeat(): void {
    if (this.isClosed || this.isHeld) return;
    if (this.out.writableNeedDrain) {
      if (++this.stalledHeartbeats >= MAX_STALLED_HEARTBEATS) this.abort();
      return;
    }
    this.stalledHeartbeats = 0;
    this.out.write(HEARTBEAT);
  }

  /** Ends the response cleanly (shutdown, agent deleted, key revoked): clients see end of stream. */
  close(): void {
    if (this.isClosed) return;
    this.res.end();
    this.markClosed();
  }

  /** Drops the connection without a clean end (a client that stopped reading). */
  abort(): void {
    if (this.isClosed) return;
    this.res.destroy();
    this.markClosed();
  }

  markClosed(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.pending = undefined;
    const onClosed = this.onClosed;
    this.onClosed = undefined;
    onClosed?.();
  }

  private waitForDrain(): void {
    if (this.isWaitingForDrain) return;
    this.isWaitingForDrain = true;
    this.out.once('drain', () => {
      this.isWaitingForDrain = false;
      this.flush();
    });
  }

  private flush(): void {
    const pending = this.pending;
    if (!pending || this.isClosed) return;
    for (const [key, message] of pending) {
      if (this.out.writableNeedDrain) {
        this.waitForDrain();
        return;
      }
      pending.delete(key);
      this.out.write(message);
    }
    this.pending = undefined;
  }
}

export interface OpenSseOptions {
  /** Hold messages until release(), so the first message (e.g. the current state) goes first. */
  held?: boolean;
  /** Reconnection delay for the client; by default 2–5 s, spread so a restart is not a stampede. */
  retryMs?: number;
}

/** Takes over the response and starts the stream: headers, `retry:`, and cleanup on close. */
export function openSse(request: FastifyRequest, reply: FastifyReply, opts: OpenSseOptions = {}): SseStream {
  reply.hijack();
  const res = reply.raw;
  // No chunked framing: the body runs until the connection closes, as SSE allows, so each
  // message is one socket write and an ended stream frees its socket at once.
  res.removeHeader('content-length');
  res.removeHeader('transfer-encoding');
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'close',
    // Proxies such as nginx would otherwise buffer the stream.
    'x-accel-buffering': 'no',
    'x-request-id': request.id,
  });
  const retryMs = opts.retryMs ?? 2000 + Math.floor(Math.random() * 3000);
  res.write(`retry: ${retryMs}\n\n`);
  // In-process injection (tests) has no real socket; then messages go through the response.
  const socket = res.socket instanceof Socket ? res.socket : undefined;
  socket?.setNoDelay(true);
  const stream = new SseStream(res, socket ?? res, opts.held === true);
  // The host ends its open streams when it stops (http/shutdown.ts), or stopping would wait on them.
  const open = request.server.hasDecorator('eventStreams') ? request.server.eventStreams : undefined;
  open?.add(stream);
  res.on('close', () => {
    open?.delete(stream);
    stream.markClosed();
  });
  return stream;
}
