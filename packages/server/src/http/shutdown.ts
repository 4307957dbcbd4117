import type { FastifyInstance } from 'fastify';
import type { Socket } from 'node:net';
import type { SseStream } from './sse.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Every open event stream of this host (http/sse.ts registers them). */
    readonly eventStreams: Set<SseStream>;
  }
}

export interface GracefulShutdown {
  /**
   * Closes the host: stops accepting, ends open streams, lets requests in flight finish, and
   * after `graceMs` cuts the connections still open (a client stalled mid-upload would
   * otherwise hold the stop forever). Then waits, again at most `graceMs`, for handlers whose
   * client has gone.
   */
  close(graceMs: number): Promise<void>;
}

/**
 * What a host needs to stop cleanly. `app.close()` stops accepting and waits for connections to
 * end, so:
 * - open event streams are ended first (they would never end by themselves);
 * - connections that carry no request (idle keep-alive ones, and ones that never sent a byte:
 *   preconnects, aborted client attempts) are closed until the server is done;
 * - requests are counted from arrival until their handler has answered, because a handler whose
 *   client has gone keeps running, and the store must not close under it. A reply is answered
 *   when `res.end` is called; a hijacked one (an event stream) when its connection closes,
 *   since nothing calls `end` when the client leaves first.
 */
export function installGracefulShutdown(app: FastifyInstance): GracefulShutdown {
  app.decorate('eventStreams', new Set<SseStream>());

  const silent = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    if (silent.size > 1024) for (const s of silent) if (s.destroyed) silent.delete(s);
    silent.add(socket);
  });
  app.server.on('request', (request: { socket: Socket }) => silent.delete(request.socket));

  let sweep: NodeJS.Timeout | undefined;
  app.addHook('preClose', async () => {
    for (const stream of [...app.eventStreams]) stream.close();
    if (!app.server.listening) return;
    const closeQuiet = () => {
      app.server.closeIdleConnections();
      for (const socket of silent) if (socket.bytesRead === 0) socket.destroy();
    };
    closeQuiet();
    sweep = setInterval(closeQuiet, 100);
    sweep.unref();
  });
  app.addHook('onClose', async () => clearInterval(sweep));

  let running = 0;
  let idle: (() => void) | undefined;
  app.addHook('onRequest', async (_request, reply) => {
    running += 1;
    let isAnswered = false;
    const answered = () => {
      if (isAnswered) return;
      isAnswered = true;
      running -= 1;
      if (running === 0) idle?.();
    };
    const raw = reply.raw;
    const end = raw.end.bind(raw) as (...args: unknown[]) => typeof raw;
    raw.end = ((...args: unknown[]) => {
      answered();
      return end(...args);
    }) as typeof raw.end;
    raw.once('close', () => {
      if (reply.sent && !raw.writableEnded) answered();
    });
  });

  async function drained(timeoutMs: number): Promise<void> {
    if (running === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      idle = resolve;
      timer = setTimeout(resolve, timeoutMs);
    });
    clearTimeout(timer);
  }

  return {
    async close(graceMs) {
      const cut = setTimeout(() => app.server.closeAllConnections(), graceMs);
      try {
        await app.close();
      } finally {
        clearTimeout(cut);
      }
      await drained(graceMs);
    },
  };
}
