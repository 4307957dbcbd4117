import type {
  AgentStatsItem, DashboardEvent, DashboardEventsQuery, DashboardStats, GenAiInfo, ModelUsageItem, Page, PolicyResult, RuleHit, TimeseriesBucket,
  TopHostItem,
} from '@corral/contracts';
import type { TelemetryEventTable } from '../../db/schema.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { type Clock, toIso } from '../../lib/clock.js';
import { accumulateSerialized, createDense, denseQuantiles } from '../../lib/log-histogram.js';
import type { AgentRollupRow, DashboardStore } from './dashboard-store.js';
import { createPriceBook, type PriceBook } from './model-prices.js';
import { addUsage, emptyUsage, type UsageTotals, usageByModel } from './model-usage.js';
import { chooseWidth, grainFor, resolveWindow, splitWindow } from './dashboard-window.js';

interface Deps {
  dashboardStore: DashboardStore;
  clock: Clock;
  /** Token prices (model-prices.ts); the built-in table when absent. */
  prices?: PriceBook;
}

export interface WindowQuery {
  from?: string | undefined;
  to?: string | undefined;
}

const MAX_RULES = 100;

interface Totals {
  total: number;
  allowed: number;
  denied: number;
  error: number;
  latencyCount: number;
  latencySum: number;
  hist: Float64Array;
}

function sumRows(rows: readonly AgentRollupRow[], into: Totals = emptyTotals()): Totals {
  for (const r of rows) {
    into.total += Number(r.total_calls);
    into.allowed += Number(r.allowed_calls);
    into.denied += Number(r.denied_calls);
    into.error += Number(r.error_calls);
    into.latencyCount += Number(r.latency_count);
    into.latencySum += Number(r.latency_sum);
    accumulateSerialized(into.hist, r.latency_hist);
  }
  return into;
}
function emptyTotals(): Totals {
  return { total: 0, allowed: 0, denied: 0, error: 0, latencyCount: 0, latencySum: 0, hist: createDense() };
}
const round = (n: number) => Math.round(n * 1000) / 1000;
const average = (t: Totals) => (t.latencyCount === 0 ? 0 : round(t.latencySum / t.latencyCount));

/** Cursor of the event list: opaque to clients, the (ts, request_id) keyset position inside. */
export function encodeEventCursor(ts: number, requestId: string): string {
  return Buffer.from(JSON.stringify([ts, requestId])).toString('base64url');
}
function decodeEventCursor(cursor: string): { ts: number; requestId: string } {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(parsed) && parsed.length === 2 && Number.isSafeInteger(parsed[0]) && typeof parsed[1] === 'string') {
      return { ts: parsed[0] as number, requestId: parsed[1] };
    }
  } catch {
    // falls through to the 400 below
  }
  throw new ValidationError('cursor is not valid', [{ field: 'cursor', message: 'must be a cursor from next_cursor' }]);
}

export function toDashboardEvent(row: TelemetryEventTable): DashboardEvent {
  return {
    request_id: row.request_id,
    agent_id: row.agent_id,
    timestamp: toIso(Number(row.ts)),
    method: row.method,
    url_host: row.url_host,
    url_path: row.url_path,
    status_code: row.status_code,
    latency_ms: row.latency_ms,
    policy_result: row.policy_result as PolicyResult,
    deny_reason: row.deny_reason,
    trace_id: row.trace_id,
    span_id: row.span_id,
    gen_ai: row.gen_ai === null ? null : (JSON.parse(row.gen_ai) as GenAiInfo),
  };
}

export function createDashboardService({ dashboardStore: store, clock, prices = createPriceBook() }: Deps) {
  const windowOf = (q: WindowQuery) => resolveWindow(q.from, q.to, clock.now());

  return {
    async stats(orgId: string, q: WindowQuery): Promise<DashboardStats> {
      const ranges = splitWindow(windowOf(q));
      const [rows, active, directory, modelRows] = await Promise.all([
        store.agentRollups(orgId, ranges, 'all'),
        store.activeAgentCount(orgId, ranges),
        store.agentDirectory(orgId),
        store.modelRollups(orgId, ranges),
      ]);
      const t = sumRows(rows);
      const usage = emptyUsage();
      for (const r of modelRows) addUsage(usage, r, prices);
      const [p50, p95, p99] = denseQuantiles(t.hist, [0.5, 0.95, 0.99]).map(round);
      return {
        total_calls: t.total, allowed_calls: t.allowed, denied_calls: t.denied, error_calls: t.error,
        avg_latency_ms: average(t), p50_latency_ms: p50 ?? 0, p95_latency_ms: p95 ?? 0, p99_latency_ms: p99 ?? 0,
        active_agents: active, total_agents: directory.filter((a) => a.live).length, ...usage,
      };
    },

    /** Every live agent (zeros when quiet) and any deleted agent that still has calls in the window. */
    async agents(orgId: string, q: WindowQuery): Promise<AgentStatsItem[]> {
      const ranges = splitWindow(windowOf(q));
      const [rows, directory, modelRows] = await Promise.all([
        store.agentRollups(orgId, ranges, 'each'), store.agentDirectory(orgId), store.modelRollups(orgId, ranges),
      ]);
      const usageOf = new Map<string, UsageTotals>();
      for (const r of modelRows) {
        let u = usageOf.get(r.agent_id);
        if (!u) usageOf.set(r.agent_id, (u = emptyUsage()));
        addUsage(u, r, prices);
      }
      const byAgent = new Map<string, Totals>();
      for (const r of rows) {
        let t = byAgent.get(r.agent_id);
        if (!t) byAgent.set(r.agent_id, (t = emptyTotals()));
        sumRows([r], t);
      }
      const names = new Map(directory.map((a) => [a.id, a]));
      for (const a of directory) if (a.live && !byAgent.has(a.id)) byAgent.set(a.id, emptyTotals());
      return [...byAgent]
        .map(([agentId, t]) => {
          const [p50, p95] = denseQuantiles(t.hist, [0.5, 0.95]).map(round);
          return {
            agent_id: agentId, agent_name: names.get(agentId)?.name ?? '', total_calls: t.total, denied_calls: t.denied,
            error_calls: t.error, avg_latency_ms: average(t), p50_latency_ms: p50 ?? 0, p95_latency_ms: p95 ?? 0,
            ...(usageOf.get(agentId) ?? emptyUsage()),
          };
        })
        .sort((a, b) => b.total_calls - a.total_calls || a.agent_name.localeCompare(b.agent_name) || a.agent_id.localeCompare(b.agent_id));
    },

    /** GenAI calls, tokens and cost per provider and model, from the model rollups. */
    async models(orgId: string, q: WindowQuery): Promise<ModelUsageItem[]> {
      return usageByModel(await store.modelRollups(orgId, splitWindow(windowOf(q))), prices);
    },

    async hosts(orgId: string, q: WindowQuery & { limit: number; agent_id?: string | undefined }): Promise<TopHostItem[]> {
      const w = windowOf(q);
      const rows = q.agent_id === undefined
        ? await store.topHosts(orgId, splitWindow(w), q.limit)
        : await store.topHostsOfAgent(orgId, q.agent_id, w.from, w.to, q.limit);
      return rows.map((r) => ({
        url_host: r.url_host, call_count: Number(r.total), allowed_count: Number(r.allowed), denied_count: Number(r.denied), error_count: Number(r.error),
      }));
    },

    /** Zero-filled buckets of the chosen width, aligned to multiples of it since the epoch (UTC). */
    async timeseries(orgId: string, q: WindowQuery): Promise<TimeseriesBucket[]> {
      const w = windowOf(q);
      const width = chooseWidth(w);
      const rows = await store.agentRollups(orgId, splitWindow(w, grainFor(width)), 'all');
      const buckets = new Map<number, TimeseriesBucket>();
      for (let b = Math.floor(w.from / width) * width; b < w.to; b += width) {
        buckets.set(b, { bucket: toIso(b), total: 0, allowed: 0, denied: 0, error: 0 });
      }
      for (const r of rows) {
        const start = Number(r.bucket_start);
        const bucket = buckets.get(start - (start % width));
        if (!bucket) continue;
        bucket.total += Number(r.total_calls);
        bucket.allowed += Number(r.allowed_calls);
        bucket.denied += Number(r.denied_calls);
        bucket.error += Number(r.error_calls);
      }
      return [...buckets.values()];
    },

    async ruleHits(orgId: string, q: WindowQuery & { agent_id?: string | undefined }): Promise<RuleHit[]> {
      const w = windowOf(q);
      const rows = q.agent_id === undefined
        ? await store.ruleHits(orgId, splitWindow(w), MAX_RULES)
        : await store.ruleHitsOfAgent(orgId, q.agent_id, w.from, w.to, MAX_RULES);
      return rows.map((r) => ({ rule_name: r.rule_name, total: Number(r.total), denied: Number(r.denied), dry_run: Number(r.dry_run) }));
    },

    async events(orgId: string, q: DashboardEventsQuery): Promise<Page<DashboardEvent>> {
      const from = q.from === undefined ? undefined : Date.parse(q.from);
      const to = q.to === undefined ? undefined : Date.parse(q.to);
      if (from !== undefined && to !== undefined && from >= to) {
        throw new ValidationError('from must be before to', [{ field: 'from', message: 'must be before to' }]);
      }
      const rows = await store.listEvents(orgId, {
        agentId: q.agent_id, method: q.method?.toUpperCase(), urlHost: q.url_host?.toLowerCase(),
        statusCode: q.status_code, policyResult: q.policy_result, traceId: q.trace_id?.toLowerCase(), from, to,
        before: q.cursor === undefined ? undefined : decodeEventCursor(q.cursor),
      }, q.limit);
      const hasMore = rows.length > q.limit;
      const page = hasMore ? rows.slice(0, q.limit) : rows;
      const last = page[page.length - 1];
      return {
        data: page.map(toDashboardEvent),
        has_more: hasMore,
        next_cursor: hasMore && last ? encodeEventCursor(Number(last.ts), last.request_id) : null,
      };
    },

    async event(orgId: string, requestId: string): Promise<DashboardEvent> {
      const row = await store.getEvent(orgId, requestId);
      if (!row) throw new NotFoundError('Event');
      return toDashboardEvent(row);
    },
  };
}
export type DashboardService = ReturnType<typeof createDashboardService>;
