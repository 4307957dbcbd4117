import { Type, type Static } from '@sinclair/typebox';
import { Timestamp, Uuid } from './common.js';
import { GenAiInfo, PolicyResult } from './telemetry.js';

/** `from` and `to` of every aggregate: `to` defaults to now, `from` to 24 hours before `to`. */
export const DashboardWindowQuery = Type.Object(
  { from: Type.Optional(Timestamp), to: Type.Optional(Timestamp) },
  { additionalProperties: false },
);
export type DashboardWindowQuery = Static<typeof DashboardWindowQuery>;

/** Narrows an aggregate to one agent; another organization's agent, like an unknown one, has no calls. */
const AgentFilter = Type.Optional(Uuid);

export const DashboardHostsQuery = Type.Object(
  {
    from: Type.Optional(Timestamp),
    to: Type.Optional(Timestamp),
    limit: Type.Integer({ minimum: 1, maximum: 50, default: 10 }),
    agent_id: AgentFilter,
  },
  { additionalProperties: false },
);
export type DashboardHostsQuery = Static<typeof DashboardHostsQuery>;

export const DashboardRuleHitsQuery = Type.Object(
  { from: Type.Optional(Timestamp), to: Type.Optional(Timestamp), agent_id: AgentFilter },
  { additionalProperties: false },
);
export type DashboardRuleHitsQuery = Static<typeof DashboardRuleHitsQuery>;

export const DashboardStats = Type.Object({
  total_calls: Type.Integer(),
  allowed_calls: Type.Integer(),
  denied_calls: Type.Integer(),
  error_calls: Type.Integer(),
  avg_latency_ms: Type.Number(),
  p50_latency_ms: Type.Number(),
  p95_latency_ms: Type.Number(),
  p99_latency_ms: Type.Number(),
  active_agents: Type.Integer({ description: 'Agents that sent at least one event in the window' }),
  total_agents: Type.Integer({ description: 'Registered agents, deleted ones excluded' }),
  input_tokens: Type.Integer({ description: 'GenAI input tokens (cached ones included)' }),
  output_tokens: Type.Integer({ description: 'GenAI output tokens (reasoning ones included)' }),
  cached_input_tokens: Type.Integer(),
  reasoning_tokens: Type.Integer(),
  cost_usd: Type.Union([Type.Number(), Type.Null()], { description: 'Cost of the GenAI calls with a price; null when none has one' }),
  unpriced_calls: Type.Integer({ description: 'GenAI calls of models without a price, not in cost_usd' }),
});
export type DashboardStats = Static<typeof DashboardStats>;

export const AgentStatsItem = Type.Object({
  agent_id: Uuid,
  agent_name: Type.String(),
  total_calls: Type.Integer(),
  denied_calls: Type.Integer(),
  error_calls: Type.Integer(),
  avg_latency_ms: Type.Number(),
  p50_latency_ms: Type.Number(),
  p95_latency_ms: Type.Number(),
  input_tokens: Type.Integer({ description: 'GenAI input tokens (cached ones included)' }),
  output_tokens: Type.Integer({ description: 'GenAI output tokens (reasoning ones included)' }),
  cached_input_tokens: Type.Integer(),
  reasoning_tokens: Type.Integer(),
  cost_usd: Type.Union([Type.Number(), Type.Null()], { description: 'Cost of the GenAI calls with a price; null when none has one' }),
  unpriced_calls: Type.Integer({ description: 'GenAI calls of models without a price, not in cost_usd' }),
});
export type AgentStatsItem = Static<typeof AgentStatsItem>;

export const TopHostItem = Type.Object({
  url_host: Type.String(),
  call_count: Type.Integer(),
  allowed_count: Type.Integer(),
  denied_count: Type.Integer(),
  error_count: Type.Integer(),
});
export type TopHostItem = Static<typeof TopHostItem>;

export const TimeseriesBucket = Type.Object({
  bucket: Timestamp,
  total: Type.Integer(),
  allowed: Type.Integer(),
  denied: Type.Integer(),
  error: Type.Integer(),
});
export type TimeseriesBucket = Static<typeof TimeseriesBucket>;

export const RuleHit = Type.Object({
  rule_name: Type.String(),
  total: Type.Integer(),
  denied: Type.Integer({ description: 'Calls the rule blocked (enforce mode)' }),
  dry_run: Type.Integer({ description: 'Calls the rule would have blocked (dry_run mode): reported as allowed' }),
});
export type RuleHit = Static<typeof RuleHit>;

/** One stored event (interface section 2.5): denied calls have null status_code and latency_ms. */
export const DashboardEvent = Type.Object({
  request_id: Type.String(),
  agent_id: Uuid,
  timestamp: Timestamp,
  method: Type.String(),
  url_host: Type.String(),
  url_path: Type.String(),
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  latency_ms: Type.Union([Type.Integer(), Type.Null()]),
  policy_result: PolicyResult,
  deny_reason: Type.Union([Type.String(), Type.Null()]),
  trace_id: Type.Union([Type.String(), Type.Null()]),
  span_id: Type.Union([Type.String(), Type.Null()]),
  gen_ai: Type.Union([GenAiInfo, Type.Null()]),
});
export type DashboardEvent = Static<typeof DashboardEvent>;

export const DashboardEventsQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'Opaque cursor from next_cursor' })),
    agent_id: Type.Optional(Uuid),
    method: Type.Optional(Type.String({ pattern: '^[A-Za-z]{1,16}$' })),
    url_host: Type.Optional(Type.String({ minLength: 1, maxLength: 260 })),
    status_code: Type.Optional(Type.Integer({ minimum: 0, maximum: 599 })),
    policy_result: Type.Optional(PolicyResult),
    from: Type.Optional(Timestamp),
    to: Type.Optional(Timestamp),
    trace_id: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{32}$', description: 'W3C trace id' })),
  },
  { additionalProperties: false },
);
export type DashboardEventsQuery = Static<typeof DashboardEventsQuery>;

export const RequestIdParams = Type.Object({ request_id: Type.String({ minLength: 1, maxLength: 200 }) });
