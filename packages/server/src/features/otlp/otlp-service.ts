import type { Principal } from '../../domain/principal.js';
import type { Clock } from '../../lib/clock.js';
import { DAY_MS } from '../../lib/time.js';
import type { AgentService, ServiceAgent } from '../agents/index.js';
import type { RateLimitDecision } from '../rate-limits/index.js';
import type { EventRow, IngestCaller, IngestService } from '../telemetry/index.js';
import type { ExportTraceRequest, PartialSuccess } from './otlp-codec.js';
import { type MappedSpan, mapSpan, serviceNameOf } from './span-mapping.js';

/*
 * OTLP export → the ingest gate (features/telemetry/ingest-service.ts). Both transports decode
 * and call `export`; this maps the spans (span-mapping.ts) and hands the gate the events:
 *   1. map        every span: events, skipped spans (accepted, not stored), refused spans
 *   2. gate       authorize `events: write`, rate limit by the number of events
 *   3. prepare    agents by service.name (provisioned on first sight), the retention window
 *   4. persist    the gate's one transaction, idempotent by request_id = trace_id:span_id
 * Spans refused in 1 or 3 are counted in partial_success with the reasons; the rest are stored
 * all together or not at all.
 */

/** Every unset or SDK-default service name (`unknown_service`, `unknown_service:node`, …) shares one agent. */
export const UNKNOWN_SERVICE = 'unknown_service';
export const normalizeServiceName = (name: string | undefined): string =>
  name === undefined || name.startsWith(UNKNOWN_SERVICE) ? UNKNOWN_SERVICE : name;

const MAX_FUTURE_MS = DAY_MS;
const MAX_REASONS = 3;

interface Deps {
  ingestService: Pick<IngestService, 'ingest'>;
  agentService: Pick<AgentService, 'provisionForServices'>;
  clock: Clock;
  retentionDays: number;
}

export interface ExportOutcome {
  /** Spans stored or already stored, and spans skipped as neither HTTP nor GenAI calls. */
  accepted: number;
  stored: number;
  partial: PartialSuccess | undefined;
}

interface Pending {
  service: string;
  event: MappedSpan;
}

class Refusals {
  count = 0;
  private readonly reasons = new Set<string>();
  add(reason: string, n = 1): void {
    this.count += n;
    this.reasons.add(reason);
  }
  toPartial(): PartialSuccess | undefined {
    return this.count === 0 ? undefined : { rejectedSpans: this.count, errorMessage: [...this.reasons].slice(0, MAX_REASONS).join('; ') };
  }
}

function mapRequest(request: ExportTraceRequest, refusals: Refusals): { pending: Pending[]; total: number } {
  const pending: Pending[] = [];
  let total = 0;
  for (const rs of request.resourceSpans) {
    const service = normalizeServiceName(serviceNameOf(rs.resource?.attributes));
    for (const ss of rs.scopeSpans) {
      for (const span of ss.spans) {
        total += 1;
        const outcome = mapSpan(span);
        if (outcome.kind === 'event') pending.push({ service, event: outcome.event });
        else if (outcome.kind === 'invalid') refusals.add(outcome.reason);
      }
    }
  }
  return { pending, total };
}

export function createOtlpService({ ingestService, agentService, clock, retentionDays }: Deps) {
  async function toRows({ orgId, actor }: IngestCaller, pending: readonly Pending[], refusals: Refusals): Promise<EventRow[]> {
    const agents: Map<string, ServiceAgent> = await agentService.provisionForServices(orgId, actor, [...new Set(pending.map((p) => p.service))]);
    const now = clock.now();
    const oldest = now - retentionDays * DAY_MS;
    const rows: EventRow[] = [];
    for (const { service, event } of pending) {
      const agent = agents.get(service);
      if (!agent || 'refused' in agent) {
        refusals.add(agent?.refused ?? `service "${service}" has no agent`);
        continue;
      }
      if (!(event.ts >= oldest && event.ts <= now + MAX_FUTURE_MS)) {
        refusals.add(`span start times must be within the last ${retentionDays} days and at most a day ahead`);
        continue;
      }
      event.org_id = orgId;
      event.agent_id = agent.agentId;
      event.received_at = now;
      rows.push(event);
    }
    return rows;
  }

  return {
    async export(principal: Principal, request: ExportTraceRequest, onQuota?: (quota: RateLimitDecision) => void): Promise<ExportOutcome> {
      const refusals = new Refusals();
      const { pending, total } = mapRequest(request, refusals);
      const outcome = await ingestService.ingest({
        principal,
        count: pending.length,
        onQuota,
        prepare: (caller) => toRows(caller, pending, refusals),
      });
      return { accepted: total - refusals.count, stored: outcome.stored.length, partial: refusals.toPartial() };
    },
  };
}
export type OtlpService = ReturnType<typeof createOtlpService>;
