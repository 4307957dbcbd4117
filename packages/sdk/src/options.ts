import type { Decision } from '@corral/policy';

export interface Logger {
  debug?(message: string): void;
  info?(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface DecisionInfo {
  decision: Decision;
  method: string;
  host: string;
  pathTemplate: string;
  requestId: string;
}

export interface CorralOptions {
  /** API key (`X-API-Key`); default `CORRAL_API_KEY`. Needs `agents:read` and `events:write`. */
  apiKey?: string;
  /** The agent's id or slug; default `CORRAL_AGENT`. */
  agent?: string;
  /** Main API host; default `CORRAL_URL`, else http://127.0.0.1:8080. */
  baseUrl?: string;
  /** Where telemetry goes; default `CORRAL_INGEST_URL`, else the base URL. */
  ingestUrl?: string;
  /** Before any policy is known, or when the only known bundle fails verification: allow (`open`, default) or block (`closed`). */
  failMode?: 'open' | 'closed';
  /** Pinned service keys `{keyid, public_key}`; otherwise fetched once from /v1/policy-keys and pinned. */
  policyKeys?: ReadonlyArray<{ keyid: string; public_key: string }>;
  /** The agent's Ed25519 key (PKCS#8 PEM); generated on first use. Default `./.corral/agent-<agent>.pem`; null keeps it in memory only. */
  keyFile?: string | null;
  /** Events per telemetry batch (1 to 1000); default 100. */
  maxBatch?: number;
  /** Longest an event waits before its batch is sent; default 2000 ms. */
  flushIntervalMs?: number;
  /** Events held at most while the service is unreachable; the oldest is dropped first. Default 10,000. */
  maxQueue?: number;
  /** How often the state endpoint is polled while the control stream is down; default 5000 ms. */
  pollIntervalMs?: number;
  /** Called with every decision, before the call goes out or is refused. */
  onDecision?: (info: DecisionInfo) => void;
  logger?: Logger;
  /** The fetch the SDK uses for its requests to Corral (not the control stream, which needs an unref'd socket); default the global fetch at construction. */
  fetch?: typeof globalThis.fetch;
}
