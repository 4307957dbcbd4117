import type { TelemetryEvent } from '@corral/contracts';
import type { AgentKey } from './agent-key.js';
import type { Logger } from './options.js';

/**
 * An event as the call path leaves it: the time as epoch milliseconds. It becomes the wire's
 * RFC 3339 `timestamp` when its batch is sent, off the call path.
 */
export type QueuedEvent = Omit<TelemetryEvent, 'timestamp'> & { readonly at: number };

function toWire(e: QueuedEvent): TelemetryEvent {
  const wire: TelemetryEvent = {
    agent_id: e.agent_id, timestamp: new Date(e.at).toISOString(), request_id: e.request_id, method: e.method, url_host: e.url_host,
    url_path: e.url_path, status_code: e.status_code, latency_ms: e.latency_ms, policy_result: e.policy_result, deny_reason: e.deny_reason,
  };
  if (e.gen_ai) wire.gen_ai = e.gen_ai;
  return wire;
}

export interface QueueSettings {
  url: string;
  apiKey: string;
  sdkVersion: string;
  maxBatch: number;
  flushIntervalMs: number;
  maxQueue: number;
  fetch: typeof globalThis.fetch;
  key: AgentKey;
  logger: Logger;
}

const BACKOFF_BASE_MS = 500;
const BACKOFF_MAX_MS = 30_000;
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    t.unref?.();
    signal?.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
  });

/** Seconds or an HTTP date, as `Retry-After` allows; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

/**
 * Events wait here until a batch is full or the interval passes, then go out signed, one batch
 * at a time. A batch that fails for a reason that may pass (network, 429, 5xx) is re-sent with
 * the same bytes, so its request ids make a repeat harmless. The call path only pushes.
 */
export class TelemetryQueue {
  private events: QueuedEvent[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> | undefined;
  private readonly stopper = new AbortController();
  queuedBytes = 0;
  dropped = 0;
  sent = 0;

  constructor(private readonly s: QueueSettings) {}

  get queued(): number {
    return this.events.length - this.head + this.inFlight;
  }
  private inFlight = 0;

  push(event: QueuedEvent): void {
    if (this.events.length - this.head >= this.s.maxQueue) {
      this.head++; // the oldest goes first
      this.dropped++;
      this.compact();
    }
    this.events.push(event);
    if (this.events.length - this.head >= this.s.maxBatch) this.kick();
    else if (!this.timer) {
      this.timer = setTimeout(() => { this.timer = undefined; this.kick(); }, this.s.flushIntervalMs);
      this.timer.unref();
    }
  }

  /**
   * Starts draining on the next turn of the event loop, never inside the call that filled the
   * batch: serializing and signing a batch is not the caller's to wait for.
   */
  private kick(): void {
    this.sending ??= new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.drain())
      .finally(() => { this.sending = undefined; });
  }

  /** Drops the consumed head of the array once it is most of it, so memory stays bounded by maxQueue. */
  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.events.length) {
      this.events = this.events.slice(this.head);
      this.head = 0;
    }
  }

  private take(): QueuedEvent[] {
    const batch = this.events.slice(this.head, this.head + this.s.maxBatch);
    this.head += batch.length;
    this.compact();
    return batch;
  }

  private async drain(): Promise<void> {
    while (this.events.length - this.head > 0 && !this.stopper.signal.aborted) {
      const batch = this.take();
      this.inFlight = batch.length;
      try {
        await this.sendWithRetry(batch);
      } finally {
        this.inFlight = 0;
      }
    }
  }

  private async sendWithRetry(batch: QueuedEvent[]): Promise<void> {
    const body = JSON.stringify({ events: batch.map(toWire), sdk_version: this.s.sdkVersion });
    const headers = {
      'content-type': 'application/json',
      'x-api-key': this.s.apiKey,
      'x-corral-signature': this.s.key.sign(body),
      'x-corral-public-key': this.s.key.publicKeyHex,
    };
    for (let attempt = 0; ; attempt++) {
      let wait: number | undefined;
      try {
        const res = await this.s.fetch(this.s.url, { method: 'POST', headers, body });
        const text = await res.text().catch(() => '');
        if (res.ok) {
          this.sent += batch.length;
          return;
        }
        if (res.status !== 429 && res.status < 500) {
          // The service refused the batch for what it holds: re-sending cannot help.
          this.dropped += batch.length;
          this.s.logger.error(`corral: telemetry batch refused (${res.status}): ${text.slice(0, 300)}`);
          return;
        }
        wait = retryAfterMs(res.headers.get('retry-after'));
      } catch (err) {
        this.s.logger.debug?.(`corral: telemetry send failed: ${(err as Error).message}`);
      }
      if (this.stopper.signal.aborted) {
        this.dropped += batch.length;
        return;
      }
      const backoff = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.min(attempt, 10));
      await sleep(wait ?? backoff / 2 + Math.random() * (backoff / 2), this.stopper.signal);
    }
  }

  /** Sends everything queued now; resolves when sent, or when `timeoutMs` passes (what is left stays queued). */
  async flush(timeoutMs = 10_000): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.events.length - this.head > 0) this.kick();
    const done = (async () => {
      while (this.sending) await this.sending;
    })();
    let t: NodeJS.Timeout | undefined;
    await Promise.race([done, new Promise<void>((r) => { t = setTimeout(r, timeoutMs); t.unref(); })]);
    clearTimeout(t);
  }

  /** Flushes (bounded by `timeoutMs`), then stops retrying; what could not be sent is counted as dropped. */
  async close(timeoutMs: number): Promise<void> {
    await this.flush(timeoutMs);
    this.stopper.abort();
    await this.sending;
    const left = this.events.length - this.head;
    this.dropped += left;
    this.events = [];
    this.head = 0;
  }
}
