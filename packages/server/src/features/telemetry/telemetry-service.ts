import type { FieldError, TelemetryEvent } from '@corral/contracts';
import { UnauthorizedError, ValidationError } from '../../errors.js';
import type { Actor } from '../../domain/principal.js';
import type { Clock } from '../../lib/clock.js';
import { DAY_MS } from '../../lib/time.js';
import type { AgentService } from '../agents/index.js';
import { isPublicKeyHex, verifyBatchSignature } from './batch-signature.js';
import type { IngestCaller } from './ingest-service.js';
import type { EventRow } from './rollup-fold.js';
import type { TelemetryStore } from './telemetry-store.js';

/** A /v1/telemetry body as it arrived: the exact bytes a signature covers, and the signature headers. */
export interface SignedBody {
  raw: Buffer;
  signature: string | undefined;
  publicKey: string | undefined;
  /** The ingest host refuses unsigned batches; the main host accepts them. */
  signatureRequired: boolean;
}

interface Deps {
  store: Pick<TelemetryStore, 'liveAgentKeys'>;
  agentService: Pick<AgentService, 'registerPublicKey'>;
  clock: Clock;
  retentionDays: number;
}

// Timestamps up to a day ahead are accepted (skewed clocks); anything older than retention
// would be dropped at once, so it is refused instead.
const MAX_FUTURE_MS = DAY_MS;
const MAX_DETAILS = 20;

const invalid = (details: FieldError[], summary: string) =>
  new ValidationError(`${summary}: ${details.map((d) => `${d.field} ${d.message}`).join('; ')}`, details.slice(0, MAX_DETAILS));

export function createTelemetryService({ store, agentService, clock, retentionDays }: Deps) {
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
        org_id: orgId, ts, request_id: e.request_id, agent_id: e.agent_id, method: e.method.toUpperCase(),
        url_host: e.url_host.toLowerCase(), url_path: e.url_path,
        status_code: denied ? null : e.status_code, latency_ms: denied ? null : (e.latency_ms ?? null),
        policy_result: e.policy_result, deny_reason: e.deny_reason ?? null,
        trace_id: e.trace_id?.toLowerCase() ?? null, span_id: e.span_id?.toLowerCase() ?? null,
        gen_ai: e.gen_ai ? JSON.stringify(e.gen_ai) : null, received_at: now,
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

  return {
    /**
     * The ingest gate's prepare stage for a batch that passed the TelemetryBatch schema: the rules
     * a schema cannot say, the agents, the signature. Answers the rows to store.
     */
    async prepare({ orgId, actor }: IngestCaller, events: readonly TelemetryEvent[], body: SignedBody): Promise<EventRow[]> {
      const rows = toRows(orgId, events, clock.now());
      const agentKeys = await checkAgents(orgId, rows);
      await checkSignature(orgId, actor, body, agentKeys);
      return rows;
    },
  };
}
export type TelemetryService = ReturnType<typeof createTelemetryService>;
