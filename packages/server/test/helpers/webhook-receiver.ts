import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the receiver got, as it arrived. */
export interface ReceivedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  readonly at: number;
}

export interface ReceiverAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Wait this long before answering (a slow receiver). */
  delayMs?: number;
}

/**
 * A real HTTP server on 127.0.0.1 for webhooks to land on. `answer` decides each response from
 * the request's number (0-based); `stop()` takes it down and `start()` brings it back on the same
 * port, so a test can play a receiver that is down and then recovers.
 */
export interface WebhookReceiver {
  readonly url: string;
  readonly port: number;
  readonly requests: ReceivedRequest[];
  answer: (n: number, request: ReceivedRequest) => ReceiverAnswer;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Resolves once `count` requests have arrived. */
  received(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
}

export async function startWebhookReceiver(path = '/hook', port = 0): Promise<WebhookReceiver> {
  let server: http.Server | undefined;
  const receiver: WebhookReceiver = {
    url: '',
    port,
    requests: [],
    answer: () => ({ status: 200, body: 'ok' }),
    async start() {
      const s = http.createServer((req, res) => {
        let body = '';
        req.setEncoding('utf8');
        req.on('data', (chunk: string) => (body += chunk));
        req.on('end', () => {
          const request: ReceivedRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, at: Date.now() };
          const n = receiver.requests.length;
          receiver.requests.push(request);
          const a = receiver.answer(n, request);
          const send = () => {
            if (res.destroyed) return;
            res.writeHead(a.status, a.headers);
            res.end(a.body ?? '');
          };
          if (a.delayMs) setTimeout(send, a.delayMs).unref();
          else send();
        });
      });
      await new Promise<void>((resolve) => s.listen(receiver.port, '127.0.0.1', resolve));
      server = s;
      const bound = (s.address() as AddressInfo).port;
      Object.assign(receiver, { port: bound, url: `http://127.0.0.1:${bound}${path}` });
    },
    async stop() {
      const s = server;
      server = undefined;
      if (!s) return;
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    },
    async received(count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (receiver.requests.length < count) {
        if (Date.now() > deadline) throw new Error(`the receiver got ${receiver.requests.length} of ${count} requests`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return receiver.requests;
    },
  };
  await receiver.start();
  return receiver;
}
