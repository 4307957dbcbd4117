import type { ControlState, DsseEnvelope, GenAiInfo, InitEvent, KillSwitchEvent, PolicyKeys, PolicyUpdatedEvent, TelemetryEvent } from '@corral/contracts';
import { compile, type CompiledPolicy, type Decision, KILL_SWITCH_DECISION, NO_POLICY_DECISION, ALLOW_DECISION, type BlockReason, type PolicyRequest } from '@corral/policy';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { loadAgentKey } from './agent-key.js';
import { EnvelopeRefused, openEnvelope, pinKeys, type PinnedKeys } from './envelope.js';
import { genAiProvider, readUsage, requestModel } from './genai.js';
import type { CorralOptions, Logger } from './options.js';
import { createSseParser, openEventStream } from './sse.js';
import { type QueuedEvent, TelemetryQueue } from './telemetry-queue.js';
import { templatePath } from './template.js';

export const SDK_VERSION = '0.1.0';
const HEARTBEAT_MS = 30_000;
/** How long one instance report may take; reports go one at a time, so a slow one delays the next. */
const REPORT_TIMEOUT_MS = 5_000;

/** Thrown by a wrapped fetch for a blocked call, before any byte leaves the process. */
export class CorralBlockedError extends Error {
  constructor(readonly reason: BlockReason, readonly rule: string | null, readonly requestId: string) {
    super(`Corral blocked this call (${reason}${rule ? `: ${rule}` : ''})`);
    this.name = 'CorralBlockedError';
  }
}

export interface CorralStatus {
  connected: boolean;
  transport: 'sse' | 'poll';
  killSwitch: boolean;
  policy: { version: number; sequence: number; hash: string; mode: 'enforce' | 'dry_run' } | null;
  queued: number;
  dropped: number;
  sent: number;
}

interface Applied {
  version: number;
  sequence: number;
  hash: string;
  compiled: CompiledPolicy;
}

/* eslint-disable no-console -- the default logger of a library that has no other channel */
const consoleLogger: Logger = { warn: (m) => console.warn(m), error: (m) => console.error(m) };
/* eslint-enable no-console */

/**
 * One `beforeExit` listener for every open instance: each sends what it holds when the loop
 * empties (which schedules work, so the loop runs on until it is sent, then ends). A process
 * ended by `process.exit()` or a signal never gets here: call `close()` first.
 */
const openInstances = new Set<Corral>();
let exitHookInstalled = false;
function flushOnExit(c: Corral): void {
  openInstances.add(c);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('beforeExit', () => {
    for (const instance of openInstances) if (instance.status().queued > 0) void instance.flush();
  });
}

const env = (name: string): string | undefined => {
  const v = process.env[name];
  return v === undefined || v === '' ? undefined : v;
};
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type FetchInput = Parameters<typeof globalThis.fetch>[0];
type FetchInit = Parameters<typeof globalThis.fetch>[1];

type HeaderSource = Headers | ReadonlyArray<readonly [string, string]> | Readonly<Record<string, string>>;

/**
 * One outbound call as the policy engine sees it. A class rather than an object of closures: the
 * call path allocates one small object, and the body is parsed only if a rule asks for it.
 */
class OutboundCall implements PolicyRequest {
  private parsed: unknown;
  private bodyRead = false;
  private readonly headerSource: HeaderSource | undefined;

  constructor(readonly method: string, readonly host: string, readonly path: string, private readonly template: string,
    input: FetchInput, private readonly init: FetchInit) {
    this.headerSource = (init?.headers ?? (input instanceof Request ? input.headers : undefined)) as HeaderSource | undefined;
  }

  /** What `per: endpoint` limits count by: the method, host and path template. */
  get endpoint(): string {
    return `${this.method} ${this.host}${this.template}`;
  }

  header(name: string): string | null {
    const h = this.headerSource;
    if (h === undefined) return null;
    if (h instanceof Headers) return h.get(name);
    if (Array.isArray(h)) {
      for (const pair of h as ReadonlyArray<readonly [string, string]>) if (pair[0].toLowerCase() === name) return pair[1];
      return null;
    }
    const record = h as Readonly<Record<string, string>>;
    for (const k in record) if (k.toLowerCase() === name) return record[k] ?? null;
    return null;
  }

  body(): unknown {
    if (!this.bodyRead) {
      this.bodyRead = true;
      const raw = this.init?.body;
      try {
        this.parsed = typeof raw === 'string' ? JSON.parse(raw) : undefined;
      } catch {
        this.parsed = undefined;
      }
    }
    return this.parsed;
  }
}

export class Corral {
  readonly instanceId = randomUUID();
  private readonly apiKey: string;
  private readonly agentRef: string;
  private agentId: string | undefined;
  private readonly baseUrl: string;
  private readonly failMode: 'open' | 'closed';
  private readonly pollIntervalMs: number;
  private readonly logger: Logger;
  private readonly net: typeof globalThis.fetch;
  private readonly queue: TelemetryQueue;
  private readonly onDecision: CorralOptions['onDecision'];
  private keys: PinnedKeys | undefined;
  private applied: Applied | null = null;
  private verificationFailed = false;
  private killSwitch = false;
  private transport: 'sse' | 'poll' = 'sse';
  private streamOpen = false;
  private lastPollOk = false;
  private appliedAt: number | null = null;
  private closed = false;
  private readonly stop = new AbortController();
  private readyResolve!: () => void;
  private readonly readyPromise: Promise<void>;
  private pollTimer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private reportQueued = false;
  /** The instance reports, one after another, so the service receives them in the order they were made. */
  private reports: Promise<void> = Promise.resolve();
  private isReady = false;

  constructor(options: CorralOptions = {}) {
    const apiKey = options.apiKey ?? env('CORRAL_API_KEY');
    const agent = options.agent ?? env('CORRAL_AGENT');
    if (!apiKey) throw new Error('Corral needs an API key: the apiKey option or CORRAL_API_KEY');
    if (!agent) throw new Error('Corral needs an agent id or slug: the agent option or CORRAL_AGENT');
    this.apiKey = apiKey;
    this.agentRef = agent;
    if (uuidPattern.test(agent)) this.agentId = agent.toLowerCase();
    this.baseUrl = (options.baseUrl ?? env('CORRAL_URL') ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
    const ingestUrl = (options.ingestUrl ?? env('CORRAL_INGEST_URL') ?? this.baseUrl).replace(/\/+$/, '');
    this.failMode = options.failMode ?? 'open';
    this.pollIntervalMs = options.pollIntervalMs ?? 5000;
    this.logger = options.logger ?? consoleLogger;
    this.net = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.onDecision = options.onDecision;
    if (options.policyKeys) this.keys = pinKeys(options.policyKeys);
    const keyFile = options.keyFile === undefined ? `.corral/agent-${agent.replace(/[^A-Za-z0-9_-]/g, '_')}.pem` : options.keyFile;
    this.queue = new TelemetryQueue({
      url: `${ingestUrl}/v1/telemetry`,
      apiKey,
      sdkVersion: `corral-node/${SDK_VERSION}`,
      maxBatch: Math.min(1000, Math.max(1, options.maxBatch ?? 100)),
      flushIntervalMs: options.flushIntervalMs ?? 2000,
      maxQueue: Math.max(1, options.maxQueue ?? 10_000),
      fetch: this.net,
      key: loadAgentKey(keyFile, (m) => this.logger.warn(m)),
      logger: this.logger,
    });
    this.readyPromise = new Promise((resolve) => (this.readyResolve = resolve));
    void this.readyPromise.then(() => (this.isReady = true));
    flushOnExit(this);
    void this.run();
  }

  /**
   * Resolves once the first control state has been received (stream `init` or a poll). While
   * it is awaited it keeps the process alive; nothing else of the SDK does (see `close`).
   */
  ready(): Promise<void> {
    if (!this.isReady && !this.closed) {
      const hold = setInterval(() => undefined, 1 << 30);
      void this.readyPromise.finally(() => clearInterval(hold));
      this.stop.signal.addEventListener('abort', () => clearInterval(hold), { once: true });
    }
    return this.readyPromise;
  }

  status(): CorralStatus {
    const a = this.applied;
    return {
      connected: this.transport === 'sse' ? this.streamOpen : this.lastPollOk,
      transport: this.transport,
      killSwitch: this.killSwitch,
      policy: a ? { version: a.version, sequence: a.sequence, hash: a.hash, mode: a.compiled.mode } : null,
      queued: this.queue.queued,
      dropped: this.queue.dropped,
      sent: this.queue.sent,
    };
  }

  flush(): Promise<void> {
    return this.queue.flush();
  }

  /**
   * Stops the stream, polling and timers, flushes telemetry (up to 10 s) and sends the instance's
   * last report, which tells the service it is closing (up to 5 s, after any report still on its way).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    openInstances.delete(this);
    this.stop.abort();
    clearTimeout(this.pollTimer);
    clearInterval(this.heartbeat);
    // A process that closes right after it started is still listed, with the state it applied.
    const lastReport = this.agentId ? this.enqueueReport(true) : Promise.resolve();
    await Promise.all([this.queue.close(10_000), lastReport]);
  }

  /** Patches globalThis.fetch; the returned function undoes it. */
  instrumentGlobalFetch(): () => void {
    const original = globalThis.fetch;
    const wrapped = this.wrap(original);
    globalThis.fetch = wrapped;
    return () => {
      if (globalThis.fetch === wrapped) globalThis.fetch = original;
    };
  }

  /** A fetch with the standard signature that decides, reports and forwards each call. */
  wrap(fetchImpl: typeof globalThis.fetch): typeof globalThis.fetch {
    const wrapped = async (input: FetchInput, init?: FetchInit): Promise<Response> => {
      const url = input instanceof URL ? input : new URL(typeof input === 'string' ? input : input.url);
      const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
      const host = url.host;
      const template = templatePath(url.pathname);
      const requestId = randomUUID();
      const decision = this.decide(method, host, url.pathname, template, input, init);
      const body = init?.body;
      if (this.onDecision) {
        try {
          this.onDecision({ decision, method, host, pathTemplate: template, requestId });
        } catch (err) {
          this.logger.warn(`corral: onDecision threw: ${(err as Error).message}`);
        }
      }
      if (!decision.allowed) {
        this.report(requestId, method, host, template, null, null, 'denied', decision.denyReason, null);
        throw new CorralBlockedError(decision.reason ?? 'rule', decision.rule, requestId);
      }
      const started = performance.now();
      let res: Response;
      try {
        res = await fetchImpl(input, init);
      } catch (err) {
        this.report(requestId, method, host, template, null, Math.round(performance.now() - started), 'error', decision.denyReason, null);
        throw err;
      }
      const latency = Math.round(performance.now() - started);
      const provider = res.body ? genAiProvider(host, url.pathname) : null;
      if (provider) {
        const clone = res.clone();
        void readUsage(clone, provider, url.pathname, requestModel(body)).then((genAi) =>
          this.report(requestId, method, host, template, res.status, latency, 'allowed', decision.denyReason, genAi),
        );
      } else {
        this.report(requestId, method, host, template, res.status, latency, 'allowed', decision.denyReason, null);
      }
      return res;
    };
    return wrapped;
  }

  private decide(method: string, host: string, path: string, template: string, input: FetchInput, init: FetchInit): Decision {
    if (this.killSwitch) return KILL_SWITCH_DECISION;
    const a = this.applied;
    if (!a) return this.failMode === 'closed' ? NO_POLICY_DECISION : ALLOW_DECISION;
    return a.compiled.evaluate(new OutboundCall(method, host, path, template, input, init));
  }

  private report(requestId: string, method: string, host: string, path: string, status: number | null, latency: number | null,
    result: TelemetryEvent['policy_result'], denyReason: string | null, genAi: GenAiInfo | null): void {
    if (!this.agentId || this.closed) return;
    const event: QueuedEvent = {
      agent_id: this.agentId, at: Date.now(), request_id: requestId, method, url_host: host, url_path: path,
      status_code: status, latency_ms: latency, policy_result: result, deny_reason: denyReason,
    };
    if (genAi) event.gen_ai = genAi;
    this.queue.push(event);
  }

  // ---- control ----

  private headers(): Record<string, string> {
    return { 'x-api-key': this.apiKey };
  }

  private async getJson<T>(path: string): Promise<T> {
    const res = await this.net(`${this.baseUrl}${path}`, { headers: this.headers(), signal: this.stop.signal });
    if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${(await res.text()).slice(0, 200)}`);
    return (await res.json()) as T;
  }

  private async resolveAgent(): Promise<void> {
    let cursor: string | null = null;
    for (let page = 0; page < 50 && !this.agentId; page++) {
      const list: { data: Array<{ id: string; slug: string }>; next_cursor: string | null } =
        await this.getJson(`/v1/agents?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
      this.agentId = list.data.find((a) => a.slug === this.agentRef)?.id;
      cursor = list.next_cursor;
      if (!cursor) break;
    }
    if (!this.agentId) throw new Error(`no agent with slug ${this.agentRef}`);
  }

  private async run(): Promise<void> {
    for (let attempt = 0; !this.closed; attempt++) {
      try {
        if (!this.agentId) await this.resolveAgent();
        if (!this.keys) this.keys = pinKeys((await this.getJson<PolicyKeys>('/v1/policy-keys')).keys);
        break;
      } catch (err) {
        if (this.closed) return;
        this.logger.warn(`corral: cannot start yet: ${(err as Error).message}`);
        await this.wait(Math.min(10_000, 250 * 2 ** attempt) * (0.5 + Math.random() / 2));
      }
    }
    this.heartbeat = setInterval(() => this.sendInstanceReport(), HEARTBEAT_MS);
    this.heartbeat.unref();
    for (let failures = 0; !this.closed; ) {
      const opened = await this.streamOnce();
      if (this.closed) return;
      failures = opened ? 0 : failures + 1;
      this.streamOpen = false;
      this.setTransport('poll');
      this.startPolling();
      const backoff = Math.min(10_000, 250 * 2 ** Math.min(failures, 6));
      await this.wait(backoff / 2 + Math.random() * (backoff / 2));
    }
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      t.unref();
      this.stop.signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
    });
  }

  /** One connection of the control stream; resolves when it ends, true if it delivered `init`. */
  private async streamOnce(): Promise<boolean> {
    let gotInit = false;
    try {
      const res = await openEventStream(`${this.baseUrl}/v1/agents/${this.agentId}/control`, this.headers(), this.stop.signal);
      if (res.statusCode !== 200) {
        this.logger.warn(`corral: control stream refused: ${res.statusCode}`);
        res.resume();
        return false;
      }
      const parser = createSseParser((e) => {
        try {
          const data: unknown = JSON.parse(e.data);
          if (e.event === 'init') {
            gotInit = true;
            this.streamOpen = true;
            this.stopPolling();
            this.setTransport('sse');
            const init = data as InitEvent;
            this.applyState(init.kill_switch_active, init.policy_envelope);
          } else if (e.event === 'kill_switch') {
            this.applyKillSwitch((data as KillSwitchEvent).active);
          } else if (e.event === 'policy_updated') {
            this.applyEnvelope((data as PolicyUpdatedEvent).policy_envelope);
          }
        } catch (err) {
          this.logger.warn(`corral: bad control event: ${(err as Error).message}`);
        }
      });
      const decoder = new TextDecoder();
      for await (const chunk of res as AsyncIterable<Buffer>) parser.push(decoder.decode(chunk, { stream: true }));
    } catch (err) {
      if (!this.closed) this.logger.debug?.(`corral: control stream ended: ${(err as Error).message}`);
    }
    return gotInit;
  }

  private startPolling(): void {
    if (this.pollTimer || this.closed) return;
    const tick = async () => {
      try {
        const state = await this.getJson<ControlState>(`/v1/agents/${this.agentId}/control/state`);
        this.lastPollOk = true;
        if (this.pollTimer) this.applyState(state.kill_switch_active, state.policy_envelope);
      } catch (err) {
        this.lastPollOk = false;
        if (!this.closed) this.logger.debug?.(`corral: poll failed: ${(err as Error).message}`);
      }
      if (this.pollTimer && !this.closed) {
        this.pollTimer = setTimeout(() => void tick(), this.pollIntervalMs);
        this.pollTimer.unref();
      }
    };
    this.pollTimer = setTimeout(() => void tick(), 0);
    this.pollTimer.unref();
  }

  private stopPolling(): void {
    clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
  }

  private setTransport(t: 'sse' | 'poll'): void {
    if (this.transport === t) return;
    this.transport = t;
    this.scheduleInstanceReport();
  }

  private applyState(killSwitch: boolean, envelope: DsseEnvelope | null): void {
    this.applyKillSwitch(killSwitch);
    if (envelope) this.applyEnvelope(envelope);
    else if (!this.applied) this.touchApplied();
    this.readyResolve();
  }

  private applyKillSwitch(active: boolean): void {
    if (this.killSwitch === active) return;
    this.killSwitch = active;
    this.touchApplied();
  }

  private touchApplied(): void {
    this.appliedAt = Date.now();
    this.scheduleInstanceReport();
  }

  /** Verifies and applies a bundle; a refused one leaves the last good policy in place. */
  private applyEnvelope(envelope: DsseEnvelope): void {
    if (!this.keys || !this.agentId) return;
    try {
      const bundle = openEnvelope(envelope, this.keys, { agentId: this.agentId, appliedSequence: this.applied?.sequence ?? 0, now: Date.now() });
      if (this.applied && this.applied.sequence === bundle.sequence && this.applied.hash === bundle.hash) return;
      this.applied = { version: bundle.version, sequence: bundle.sequence, hash: bundle.hash, compiled: compile(bundle.policy) };
      this.verificationFailed = false;
      this.touchApplied();
    } catch (err) {
      const why = err instanceof EnvelopeRefused ? err.refusal : 'invalid_policy';
      if (!this.applied) this.verificationFailed = true;
      this.logger.warn(`corral: policy bundle refused (${why}): ${(err as Error).message}`);
    }
  }

  private scheduleInstanceReport(): void {
    if (this.reportQueued) return;
    this.reportQueued = true;
    queueMicrotask(() => {
      this.reportQueued = false;
      this.sendInstanceReport();
    });
  }

  private sendInstanceReport(): void {
    if (this.agentId && !this.closed) void this.enqueueReport(false);
  }

  private enqueueReport(closing: boolean): Promise<void> {
    this.reports = this.reports.then(() => this.postInstanceReport(closing));
    return this.reports;
  }

  private async postInstanceReport(closing: boolean): Promise<void> {
    const a = this.applied;
    const body = {
      instance_id: this.instanceId, hostname: hostname().slice(0, 255), sdk_version: SDK_VERSION, transport: this.transport,
      applied_at: this.appliedAt === null ? null : new Date(this.appliedAt).toISOString(),
      policy_version: a?.version ?? null, policy_sequence: a?.sequence ?? null, policy_hash: a?.hash ?? null, kill_switch_active: this.killSwitch,
      ...(closing ? { closed: true } : {}),
    };
    try {
      const res = await this.net(`${this.baseUrl}/v1/agents/${this.agentId}/instances`, {
        method: 'POST', headers: { ...this.headers(), 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(REPORT_TIMEOUT_MS),
      });
      await res.text();
      if (!res.ok) this.logger.debug?.(`corral: instance report refused: ${res.status}`);
    } catch (err) {
      this.logger.debug?.(`corral: instance report failed: ${(err as Error).message}`);
    }
  }
}
