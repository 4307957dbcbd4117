import type { FastifyInstance, FastifyRequest } from 'fastify';
import { finished } from 'node:stream';

/**
 * How much of a refused body is still read, and thrown away, past the body limit before the
 * connection is cut. 64 MiB covers the mistakes worth answering (a log file or a batch a few
 * times too big; 40 MiB in the report that led here) with room to spare; reading and dropping
 * costs bandwidth but no memory; and a client sending more than that is not worth reading for.
 */
export const OVERSIZED_BODY_DRAIN_BYTES = 64 * 1024 * 1024;

/**
 * Lets a client whose body is over the limit read its 413, and one refused before its body was
 * read (a bad key, a wrong content type) read that answer, without letting either keep the
 * server reading.
 *
 * Fastify refuses such a body as soon as it knows (by Content-Length, or once the bytes read pass
 * the limit), marks the answer `Connection: close` and sends it; Node then closes the socket while
 * the client is still uploading. Many clients write their whole body before reading the answer
 * (Node's http, fetch), and a socket closed with their bytes still arriving sends them a reset: they see
 * EPIPE or ECONNRESET and never the 413. So the 413 is held back while the rest of the body is
 * read and dropped, and goes out once the body has ended: the close then comes after the client
 * is done sending, and is clean. The drain is capped (OVERSIZED_BODY_DRAIN_BYTES past the limit)
 * so no client can keep the server reading: a longer body is cut off, and one declared longer is
 * answered and closed at once, as before.
 *
 * Any other refusal given while the body is still arriving (authentication and content-type
 * checks answer before the body is parsed) takes the same path and closes the connection after
 * it: otherwise Node would read and drop the rest of the body to reuse the connection, however
 * long it runs, for a client that has not even authenticated.
 */
export function installOversizedBodyDrain(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode < 400 || request.raw.complete) return payload;
    if (reply.statusCode !== 413) reply.header('connection', 'close');
    // With a Content-Length, Fastify refused before reading any of the body, and Node's parser
    // ends it there: the declared length is what the drain reads. Without one (chunked), Fastify
    // read just past the limit before refusing, and the drain counts what comes after it.
    const declared = Number(request.headers['content-length']);
    const budget = Number.isNaN(declared) ? OVERSIZED_BODY_DRAIN_BYTES : declared;
    if (budget > request.routeOptions.bodyLimit + OVERSIZED_BODY_DRAIN_BYTES) return payload;
    await drained(request, budget);
    return payload;
  });
}

/**
 * Reads the rest of the body into nothing, cutting the connection after `budget` bytes; resolves
 * when the body has ended, or the connection has.
 */
function drained(request: FastifyRequest, budget: number): Promise<void> {
  const raw = request.raw;
  let read = 0;
  const onData = (chunk: Buffer) => {
    read += chunk.length;
    if (read <= budget) return;
    raw.off('data', onData);
    request.log.warn({ drainedBytes: read }, 'refused body still arriving past the drain cap: connection cut');
    raw.socket.destroy();
  };
  return new Promise((resolve) => {
    // Starts the flow too when Fastify never did (refused by Content-Length).
    raw.on('data', onData);
    raw.resume();
    // Settles on the body's end and on a closed or cut connection alike (then with an error,
    // which is no news: the answer simply has nowhere to go).
    finished(raw, { writable: false }, () => {
      raw.off('data', onData);
      resolve();
    });
  });
}
