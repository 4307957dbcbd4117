import { ForbiddenError, UnauthorizedError } from '../../errors.js';
import { type Actor, actorOf, type Principal, scopeAllows } from '../../domain/principal.js';
import type { Logger } from '../../lib/logger.js';
import { rateLimitError, type RateLimitDecision, type RateLimiter } from '../rate-limits/index.js';
import type { EventRow } from './rollup-fold.js';
import type { TelemetryWriter } from './telemetry-writer.js';

/*
 * The one gate every ingest path passes (/v1/telemetry now, OTLP over HTTP and gRPC next);
 * transports only decode. Stages, each its own step below:
 *   1. authenticate   an API key allowed to write `events` (HTTP routes arrive authenticated
 *                     by the auth plugin; other transports call `authenticate`)
 *   2. rate limit     the request's events against the organization's per-minute quota, all
 *                     or nothing (contract section 5)
 *   3. prepare        the transport's own checks and mapping into rows; throwing refuses the request
 *   4. persist        one transaction: new request ids stored and folded into the rollups,
 *                     known ones skipped (idempotency)
 *   5. fan out        after commit, to the listeners (metrics today); a listener never fails a batch
 * A request refused after stage 2 gives its quota back before it is answered.
 */

/** Who is sending, once authenticated and allowed. */
export interface IngestCaller {
  readonly orgId: string;
  readonly actor: Actor;
}

export interface IngestRequest {
  readonly principal: Principal;
  /** How many events the request carries: what the rate limit counts. */
  readonly count: number;
  /** Told the organization's quota after the rate-limit stage, and again after a refund. */
  readonly onQuota?: ((quota: RateLimitDecision) => void) | undefined;
  /** Stage 3, run once the quota is taken. */
  prepare(caller: IngestCaller): Promise<readonly EventRow[]>;
}

export interface IngestOutcome {
  /** Events of the request, re-sent duplicates included. */
  readonly received: number;
  /** Events this request stored for the first time. */
  readonly stored: readonly EventRow[];
  readonly quota: RateLimitDecision;
}

/** Told about events after their transaction commits. */
export type StoredEventsListener = (orgId: string, rows: readonly EventRow[]) => void;

interface Deps {
  authenticateApiKey: (key: string) => Promise<Principal>;
  rateLimiter: RateLimiter;
  writer: TelemetryWriter;
  listeners?: readonly StoredEventsListener[];
  /** Told of every stored batch: the events it carried and the seconds from quota check to commit (metrics). */
  onBatch?: (events: number, seconds: number) => void;
  log: Logger;
}

export function createIngestService({ authenticateApiKey, rateLimiter, writer, listeners = [], onBatch, log }: Deps) {
  /** Stage 1 for transports without the HTTP auth plugin; the same 401 and 403 answers. */
  async function authenticate(apiKey: string | undefined): Promise<Principal> {
    if (apiKey === undefined || apiKey.length === 0) throw new UnauthorizedError('An API key is required (X-API-Key)');
    return authenticateApiKey(apiKey);
  }

  function authorize(principal: Principal): IngestCaller {
    if (principal.kind !== 'api_key') throw new ForbiddenError('Telemetry is sent with an API key (X-API-Key), not a JWT');
    if (!scopeAllows(principal.scope, 'events', 'write')) {
      throw new ForbiddenError("The API key's scope does not allow write access to events");
    }
    return { orgId: principal.orgId, actor: actorOf(principal) };
  }

  async function limit(caller: IngestCaller, request: IngestRequest): Promise<RateLimitDecision> {
    const quota = await rateLimiter.take(caller.orgId, request.count);
    request.onQuota?.(quota);
    if (!quota.allowed) throw rateLimitError(quota, request.count);
    return quota;
  }

  /** A refused request's quota goes back; failing to give it back must not hide why it was refused. */
  async function giveBack(caller: IngestCaller, request: IngestRequest): Promise<void> {
    try {
      await rateLimiter.refund(caller.orgId, request.count);
      request.onQuota?.(await rateLimiter.peek(caller.orgId));
    } catch (err) {
      log.warn({ err, orgId: caller.orgId }, 'could not give back the quota of a refused request');
    }
  }

  function fanOut(orgId: string, stored: readonly EventRow[]): void {
    if (stored.length === 0) return;
    for (const listener of listeners) {
      try {
        listener(orgId, stored);
      } catch (err) {
        log.error({ err }, 'a stored-events listener failed');
      }
    }
  }

  return {
    authenticate,

    async ingest(request: IngestRequest): Promise<IngestOutcome> {
      const caller = authorize(request.principal);
      const quota = await limit(caller, request);
      const began = performance.now();
      let stored: EventRow[];
      try {
        stored = await writer.write(await request.prepare(caller));
      } catch (err) {
        await giveBack(caller, request);
        throw err;
      }
      onBatch?.(request.count, (performance.now() - began) / 1000);
      fanOut(caller.orgId, stored);
      return { received: request.count, stored, quota };
    },

    /** The organization's quota without taking anything, for answers refused before the gate. */
    quota: (orgId: string): Promise<RateLimitDecision> => rateLimiter.peek(orgId),
  };
}
export type IngestService = ReturnType<typeof createIngestService>;
