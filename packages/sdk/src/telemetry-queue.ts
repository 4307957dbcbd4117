import type { TelemetryEvent } from '@corral/contracts';
import type { AgentKey } from './agent-key.js';
import type { Logger } from './options.js';

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
  private events: TelemetryEvent[] = [];
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

  push(event: TelemetryEvent): void {
    if (this.events.length - this.head >= this.s.maxQueue) {
      this.head++; // the oldest goes first
      this.dropped++;
    }
    this.events.push(event);
    if (this.events.length - this.head >= this.s.maxBatch) this.kick();
    else if (!this.timer) {
      this.timer = setTimeout(() => { this.timer = undefined; this.kick(); }, this.s.flushIntervalMs);
      this.timer.unref();
    }
  }

  private kick(): void {
    this.sending ??= this.drain().finally(() => { this.sending = undefined; });
  }

  private take(): TelemetryEvent[] {
    const batch = this.events.slice(this.head, this.head + this.s.maxBatch);
    this.head += batch.length;
    if (this.head > 1024 && this.head * 2 > this.events.length) {
      this.events = this.events.slice(this.head);
      this.head = 0;
    }
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

  private async sendWithRetry(batch: TelemetryEvent[]): Promise<void> {
    const body = JSON.stringify({ events: batch, sdk_version: this.s.sdkVersion });
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
    this.kick();
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
