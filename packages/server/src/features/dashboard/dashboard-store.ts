import { type ExpressionBuilder, sql } from 'kysely';
import type { Store } from '../../db/database.js';
import { ALL_AGENTS, type Database, type TelemetryEventTable } from '../../db/schema.js';
import type { RollupRange } from './dashboard-window.js';

export interface AgentRollupRow {
  agent_id: string;
  bucket_start: number;
  total_calls: number;
  allowed_calls: number;
  denied_calls: number;
  error_calls: number;
  latency_count: number;
  latency_sum: number;
  latency_hist: string;
}

export interface EventFilters {
  agentId?: string | undefined;
  method?: string | undefined;
  urlHost?: string | undefined;
  statusCode?: number | undefined;
  policyResult?: string | undefined;
  traceId?: string | undefined;
  from?: number | undefined;
  to?: number | undefined;
  /** Keyset position: rows strictly older than (ts, request_id). */
  before?: { ts: number; requestId: string } | undefined;
}

type RollupTable = 'telemetry_rollups' | 'telemetry_host_rollups' | 'telemetry_rule_rollups' | 'telemetry_model_rollups';

export interface ModelRollupRow {
  agent_id: string;
  bucket_start: number;
  provider: string;
  model: string;
  calls: number;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  reasoning_tokens: number;
}

/** One OR branch per range; each is a primary-key range scan (org_id, grain, bucket_start, …). */
function inRanges<T extends RollupTable>(ranges: readonly RollupRange[]) {
  return (eb: ExpressionBuilder<Database, T>) =>
    eb.or(ranges.map((r) => eb.and([
      eb(sql.ref(`grain`), '=', r.grain),
      eb(sql.ref(`bucket_start`), '>=', r.from),
      eb(sql.ref(`bucket_start`), '<', r.to),
    ])));
}

const sumOf = (column: string) => sql<number>`sum(${sql.ref(column)})`;
/** Rows for which the condition holds, as a number on both engines. */
const countWhere = (condition: ReturnType<typeof sql>) => sql<number>`sum(case when ${condition} then 1 else 0 end)`;

/** Every dashboard read: aggregates from the rollups (one agent's hosts and rule hits from its events), the event list from raw events. */
export function createDashboardStore({ kysely: k, dialect }: Store) {
  return {
    /**
     * Rollup rows of the organization total (agentScope 'all'), of each agent ('each'), or of one
     * agent (`{ agentId }`).
     */
    async agentRollups(orgId: string, ranges: readonly RollupRange[], agentScope: 'all' | 'each' | { agentId: string }): Promise<AgentRollupRow[]> {
      if (ranges.length === 0) return [];
      const [op, agentId] = agentScope === 'all' ? ['=', ALL_AGENTS] as const : agentScope === 'each' ? ['<>', ALL_AGENTS] as const : ['=', agentScope.agentId] as const;
      return k
        .selectFrom('telemetry_rollups')
        .select(['agent_id', 'bucket_start', 'total_calls', 'allowed_calls', 'denied_calls', 'error_calls', 'latency_count', 'latency_sum', 'latency_hist'])
        .where('org_id', '=', orgId)
        .where('agent_id', op, agentId)
        .where(inRanges<'telemetry_rollups'>(ranges))
        .execute();
    },

    /** GenAI usage rows per agent, provider and model; priced by the service with each row's bucket date. */
    async modelRollups(orgId: string, ranges: readonly RollupRange[]): Promise<ModelRollupRow[]> {
      if (ranges.length === 0) return [];
      return k
        .selectFrom('telemetry_model_rollups')
        .select(['agent_id', 'bucket_start', 'provider', 'model', 'calls', 'input_tokens', 'output_tokens', 'cached_input_tokens', 'reasoning_tokens'])
        .where('org_id', '=', orgId)
        .where(inRanges<'telemetry_model_rollups'>(ranges))
        .execute();
    },

    async activeAgentCount(orgId: string, ranges: readonly RollupRange[]): Promise<number> {
      if (ranges.length === 0) return 0;
      const row = await k
        .selectFrom('telemetry_rollups')
        .select(sql<number>`count(distinct agent_id)`.as('n'))
        .where('org_id', '=', orgId)
        .where('agent_id', '<>', ALL_AGENTS)
        .where(inRanges<'telemetry_rollups'>(ranges))
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    async topHosts(orgId: string, ranges: readonly RollupRange[], limit: number) {
      if (ranges.length === 0) return [];
      return k
        .selectFrom('telemetry_host_rollups')
        .select(['url_host', sumOf('total_calls').as('total'), sumOf('allowed_calls').as('allowed'), sumOf('denied_calls').as('denied'), sumOf('error_calls').as('error')])
        .where('org_id', '=', orgId)
        .where(inRanges<'telemetry_host_rollups'>(ranges))
        .groupBy('url_host')
        .orderBy(sumOf('total_calls'), 'desc')
        .orderBy('url_host')
        .limit(limit)
        .execute();
    },

    /**
     * One agent's most-called hosts in [from, to), counted from its stored events (the host
     * rollups are per organization): the (org_id, agent_id, ts) index bounds the read to the
     * agent's calls in the window.
     */
    async topHostsOfAgent(orgId: string, agentId: string, from: number, to: number, limit: number) {
      return k
        .selectFrom('telemetry_events')
        .select([
          'url_host', sql<number>`count(*)`.as('total'), countWhere(sql`policy_result = 'allowed'`).as('allowed'),
          countWhere(sql`policy_result = 'denied'`).as('denied'), countWhere(sql`policy_result = 'error'`).as('error'),
        ])
        .where('org_id', '=', orgId)
        .where('agent_id', '=', agentId)
        .where('ts', '>=', from)
        .where('ts', '<', to)
        .groupBy('url_host')
        .orderBy(sql`count(*)`, 'desc')
        .orderBy('url_host')
        .limit(limit)
        .execute();
    },

    /** One agent's rule hits in [from, to), from its stored events, counted as the rule rollups count them. */
    async ruleHitsOfAgent(orgId: string, agentId: string, from: number, to: number, limit: number) {
      return k
        .selectFrom('telemetry_events')
        .select([
          sql<string>`deny_reason`.as('rule_name'), sql<number>`count(*)`.as('total'),
          countWhere(sql`policy_result = 'denied'`).as('denied'), countWhere(sql`policy_result = 'allowed'`).as('dry_run'),
        ])
        .where('org_id', '=', orgId)
        .where('agent_id', '=', agentId)
        .where('ts', '>=', from)
        .where('ts', '<', to)
        .where('deny_reason', 'is not', null)
        .groupBy('deny_reason')
        .orderBy(sql`count(*)`, 'desc')
        .orderBy('deny_reason')
        .limit(limit)
        .execute();
    },

    async ruleHits(orgId: string, ranges: readonly RollupRange[], limit: number) {
      if (ranges.length === 0) return [];
      return k
        .selectFrom('telemetry_rule_rollups')
        .select(['rule_name', sumOf('total_calls').as('total'), sumOf('denied_calls').as('denied'), sumOf('dry_run_calls').as('dry_run')])
        .where('org_id', '=', orgId)
        .where(inRanges<'telemetry_rule_rollups'>(ranges))
        .groupBy('rule_name')
        .orderBy(sumOf('total_calls'), 'desc')
        .orderBy('rule_name')
        .limit(limit)
        .execute();
    },

    /**
     * Names of the organization's agents, deleted ones too (their telemetry is kept). A narrow
     * read of the agents table: the dashboard needs names and liveness, nothing else.
     */
    async agentDirectory(orgId: string): Promise<Array<{ id: string; name: string; live: boolean }>> {
      const rows = await k.selectFrom('agents').select(['id', 'name', 'deleted_at']).where('org_id', '=', orgId).execute();
      return rows.map((r) => ({ id: r.id, name: r.name, live: r.deleted_at === null }));
    },

    /** Newest first by (ts, request_id), the primary key order; limit+1 rows tell if there is more. */
    async listEvents(orgId: string, f: EventFilters, limit: number): Promise<TelemetryEventTable[]> {
      let q = k.selectFrom('telemetry_events').selectAll().where('org_id', '=', orgId);
      if (f.agentId !== undefined) q = q.where('agent_id', '=', f.agentId);
      if (f.method !== undefined) q = q.where('method', '=', f.method);
      if (f.urlHost !== undefined) q = q.where('url_host', '=', f.urlHost);
      if (f.statusCode !== undefined) q = q.where('status_code', '=', f.statusCode);
      if (f.policyResult !== undefined) q = q.where('policy_result', '=', f.policyResult);
      if (f.traceId !== undefined) q = q.where('trace_id', '=', f.traceId);
      if (f.from !== undefined) q = q.where('ts', '>=', f.from);
      if (f.to !== undefined) q = q.where('ts', '<', f.to);
      const before = f.before;
      if (before) {
        q = q.where('ts', '<=', before.ts).where((eb) => eb.or([
          eb('ts', '<', before.ts),
          eb('request_id', '<', before.requestId),
        ]));
      }
      return q.orderBy('ts', 'desc').orderBy('request_id', 'desc').limit(limit + 1).execute();
    },

    /** With day partitions, the request-id claims give the event's day, so one partition is read. */
    async getEvent(orgId: string, requestId: string): Promise<TelemetryEventTable | undefined> {
      let q = k.selectFrom('telemetry_events').selectAll().where('org_id', '=', orgId).where('request_id', '=', requestId);
      if (dialect.partitionsRawEvents) {
        const claimed = await k.selectFrom('telemetry_request_ids').select('ts').where('org_id', '=', orgId).where('request_id', '=', requestId).executeTakeFirst();
        if (!claimed) return undefined;
        q = q.where('ts', '=', claimed.ts);
      }
      return q.executeTakeFirst();
    },
  };
}
export type DashboardStore = ReturnType<typeof createDashboardStore>;
