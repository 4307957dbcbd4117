import type { FieldError, TelemetryEvent } from '@corral/contracts';
import { UnauthorizedError, ValidationError } from '../../errors.js';
import type { Actor } from '../../http/principal.js';
import type { Clock } from '../../lib/clock.js';
import type { AgentService } from '../agents/index.js';
import { isPublicKeyHex, verifyBatchSignature } from './batch-signature.js';
import { DAY_MS, type EventRow } from './rollup-fold.js';
import type { TelemetryStore } from './telemetry-store.js';

/** Told about stored events after their transaction commits (live streams, evaluators). */
export interface TelemetryListener {
  eventsStored(orgId: string, events: readonly EventRow[]): void;
}

export interface SignedBody {
  raw: Buffer;
  signature: string | undefined;
  publicKey: string | undefined;
  /** The ingest host refuses unsigned batches; the main host accepts them. */
  signatureRequired: boolean;
}

interface Deps {
  store: Pick<TelemetryStore, 'write' | 'liveAgentKeys'>;
  agentService: Pick<AgentService, 'registerPublicKey'>;
  clock: Clock;
  retentionDays: number;
  listeners?: readonly TelemetryListener[];
}

// Timestamps up to a day ahead are accepted (skewed clocks); anything older than retention
// would be dropped at once, so it is refused instead.
const MAX_FUTURE_MS = DAY_MS;
const MAX_DETAILS = 20;

const invalid = (details: FieldError[], summary: string) =>
  new ValidationError(`${summary}: ${details.map((d) => `${d.field} ${d.message}`).join('; ')}`, details.slice(0, MAX_DETAILS));

export function createTelemetryService({ store, agentService, clock, retentionDays, listeners = [] }: Deps) {
  /** Stage: field rules the schema cannot express; events become rows. Denied calls never reached the API. */
  function toRows(orgId: string, events: readonly TelemetryEvent[], now: number): EventRow[] {
    const oldest = now - retentionDays * DAY_MS;
    const problems: FieldError[] = [];
    const rows = events.map((e, i): EventRow => {
      const ts = Date.parse(e.timestamp);
      if (!(ts >= oldest && ts <= now + MAX_FUTURE_MS)) {
        problems.push({ field: `events.${i}.timestamp`, message: `must be within the last ${retentionDays} days and at most a day ahead` });
      }
      // PostgreSQL text cannot hold NUL; refusing it here keeps both engines alike and the batch a 400.
      for (const field of ['request_id', 'url_host', 'url_path', 'deny_reason'] as const) {
        if (e[field]?.includes('\u0000')) problems.push({ field: `events.${i}.${field}`, message: 'must not contain NUL characters' });
      }
      const denied = e.policy_result === 'denied';
      return {
        org_id: orgId, ts, request_id: e.request_id, agent_id: e.agent_id.toLowerCase(), method: e.method.toUpperCase(),
        url_host: e.url_host.toLowerCase(), url_path: e.url_path,
        status_code: denied ? null : e.status_code, latency_ms: denied ? null : (e.latency_ms ?? null),
        policy_result: e.policy_result, deny_reason: e.deny_reason ?? null,
        trace_id: e.trace_id?.toLowerCase() ?? null, span_id: e.span_id?.toLowerCase() ?? null, gen_ai: null, received_at: now,
      };
    });
    if (problems.length > 0) throw invalid(problems, 'Invalid events');
    return rows;
  }

  /** Stage: every event names a live agent of the caller's organization. Answers their public keys. */
  async function checkAgents(orgId: string, rows: readonly EventRow[]): Promise<Map<string, string | null>> {
    const keys = await store.liveAgentKeys(orgId, [...new Set(rows.map((r) => r.agent_id))]);
    const problems: FieldError[] = [];
    rows.forEach((r, i) => {
      if (!keys.has(r.agent_id)) problems.push({ field: `events.${i}.agent_id`, message: 'is not an agent of this organization' });
    });
    if (problems.length > 0) throw invalid(problems, 'Unknown agents');
    return keys;
  }

  /** Stage: Ed25519 over the raw body, against the agent's key (registering a first key once it verifies). */
  async function checkSignature(orgId: string, actor: Actor, body: SignedBody, agentKeys: Map<string, string | null>): Promise<void> {
    if (body.signature === undefined) {
      if (body.signatureRequired) throw new UnauthorizedError('Telemetry on the ingest host must be signed (x-corral-signature)');
      return;
    }
    if (agentKeys.size !== 1) throw new ValidationError('A signed batch must hold the events of one agent');
    const [[agentId, registered]] = [...agentKeys] as [[string, string | null]];
    const key = registered ?? body.publicKey;
    if (key === undefined || !isPublicKeyHex(key)) {
      throw new UnauthorizedError('The agent has no public key; send it in x-corral-public-key with the first signed batch');
    }
    if (!verifyBatchSignature(body.raw, body.signature, key)) throw new UnauthorizedError('Invalid telemetry signature');
    if (registered === null) await agentService.registerPublicKey(orgId, actor, agentId, key);
  }

  /** Stage: after commit, tell whoever listens; a listener's failure never fails the batch. */
  function fanOut(orgId: string, stored: readonly EventRow[]): void {
    if (stored.length === 0) return;
    for (const listener of listeners) {
      try {
        listener.eventsStored(orgId, stored);
      } catch {
        // Listeners are best-effort by contract: the events are already committed.
      }
    }
  }

  return {
    /** The stages after authentication, rate limiting and schema validation (see telemetry-routes.ts). */
    async ingest(orgId: string, actor: Actor, events: readonly TelemetryEvent[], body: SignedBody): Promise<{ accepted: number }> {
      const rows = toRows(orgId, events, clock.now());
      const agentKeys = await checkAgents(orgId, rows);
      await checkSignature(orgId, actor, body, agentKeys);
      fanOut(orgId, await store.write(rows));
      return { accepted: rows.length };
    },

    /** For other ingest paths (OTLP) that have already mapped and checked their events. */
    async store(rows: readonly EventRow[]): Promise<number> {
      const stored = await store.write(rows);
      fanOut(rows[0]?.org_id ?? '', stored);
      return stored.length;
    },
  };
}
export type TelemetryService = ReturnType<typeof createTelemetryService>;
