import { ALL_AGENTS, ROLLUP_GRAINS, type TelemetryEventTable } from '../../db/schema.js';
import { addValue, createHistogram, type LogHistogram, mergeInto, serializeHistogram } from '../../lib/log-histogram.js';
import { MINUTE_MS } from '../../lib/time.js';

/** One stored telemetry event, as every ingest path hands it to the writer. */
export type EventRow = TelemetryEventTable;

interface Counts {
  total_calls: number;
  allowed_calls: number;
  denied_calls: number;
  error_calls: number;
}
export interface AgentRollup extends Counts {
  grain: number;
  bucket_start: number;
  agent_id: string;
  latency_count: number;
  latency_sum: number;
  latency_hist: string;
}
export interface HostRollup extends Counts {
  grain: number;
  bucket_start: number;
  url_host: string;
}
export interface RuleRollup {
  grain: number;
  bucket_start: number;
  rule_name: string;
  total_calls: number;
  denied_calls: number;
  dry_run_calls: number;
}
interface ModelCounts {
  calls: number;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  reasoning_tokens: number;
}
export interface ModelRollup extends ModelCounts {
  grain: number;
  bucket_start: number;
  agent_id: string;
  provider: string;
  model: string;
}
export interface FoldedBatch {
  agents: AgentRollup[];
  hosts: HostRollup[];
  rules: RuleRollup[];
  models: ModelRollup[];
}

/** Provider and model of an event without one: GenAI spans need not say (docs/otlp.md). */
export const UNKNOWN_MODEL = 'unknown';
const newModelCounts = (): ModelCounts => ({ calls: 0, input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, reasoning_tokens: 0 });
function addModelCounts(into: ModelCounts, from: ModelCounts): void {
  into.calls += from.calls;
  into.input_tokens += from.input_tokens;
  into.output_tokens += from.output_tokens;
  into.cached_input_tokens += from.cached_input_tokens;
  into.reasoning_tokens += from.reasoning_tokens;
}
const SEP = '\u0001';
const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);
const text = (v: unknown): string => (typeof v === 'string' && v.length > 0 ? v : UNKNOWN_MODEL);

/** gen_ai (stored JSON) → the model dimension and its counts; the model answered beats the one asked for. */
function foldGenAi(models: Map<string, ModelCounts>, agentId: string, genAi: string): void {
  const g = JSON.parse(genAi) as Record<string, unknown>;
  const key = `${agentId}${SEP}${text(g.system)}${SEP}${text(g.response_model ?? g.request_model)}`;
  const acc = getOr(models, key, newModelCounts);
  acc.calls += 1;
  acc.input_tokens += count(g.input_tokens);
  acc.output_tokens += count(g.output_tokens);
  acc.cached_input_tokens += count(g.cached_input_tokens);
  acc.reasoning_tokens += count(g.reasoning_tokens);
}

interface AgentAcc extends Counts {
  latency_count: number;
  latency_sum: number;
  hist: LogHistogram;
}
const newCounts = (): Counts => ({ total_calls: 0, allowed_calls: 0, denied_calls: 0, error_calls: 0 });
const newAgentAcc = (): AgentAcc => ({ ...newCounts(), latency_count: 0, latency_sum: 0, hist: createHistogram() });

function countResult(c: Counts, result: string, n = 1): void {
  c.total_calls += n;
  if (result === 'allowed') c.allowed_calls += n;
  else if (result === 'denied') c.denied_calls += n;
  else c.error_calls += n;
}

function addCounts(into: Counts, from: Counts): void {
  into.total_calls += from.total_calls;
  into.allowed_calls += from.allowed_calls;
  into.denied_calls += from.denied_calls;
  into.error_calls += from.error_calls;
}

function getOr<V>(map: Map<string, V>, key: string, make: () => V): V {
  let v = map.get(key);
  if (v === undefined) map.set(key, (v = make()));
  return v;
}

/** "minute|dimension" keys; the minute start is the first field so coarser grains derive from it. */
const keyOf = (minute: number, dim: string) => `${minute}|${dim}`;
function splitKey(key: string): [number, string] {
  const bar = key.indexOf('|');
  return [Number(key.slice(0, bar)), key.slice(bar + 1)];
}

interface MinuteAcc {
  agents: Map<string, AgentAcc>;
  all: AgentAcc;
  hosts: Map<string, Counts>;
  rules: Map<string, RuleRollup>;
  models: Map<string, ModelCounts>;
}

function foldLatency(acc: AgentAcc, latency: number | null): void {
  if (latency === null) return;
  acc.latency_count += 1;
  acc.latency_sum += latency;
  addValue(acc.hist, latency);
}

/**
 * Per minute, then per dimension: the dimension strings come from the parsed batch and keep
 * their hashes, where a "minute|dimension" key built per event costs a number-to-text
 * conversion and a fresh hash on every lookup (most of the fold's time when it did).
 */
function foldMinutes(events: readonly EventRow[]): Map<number, MinuteAcc> {
  const minutes = new Map<number, MinuteAcc>();
  let current: MinuteAcc | undefined;
  let currentMinute = Number.NaN;
  for (const e of events) {
    const minute = e.ts - (e.ts % MINUTE_MS);
    if (current === undefined || minute !== currentMinute) {
      currentMinute = minute;
      current = minutes.get(minute);
      if (current === undefined) {
        current = { agents: new Map(), all: newAgentAcc(), hosts: new Map(), rules: new Map(), models: new Map() };
        minutes.set(minute, current);
      }
    }
    const agent = getOr(current.agents, e.agent_id, newAgentAcc);
    countResult(agent, e.policy_result);
    foldLatency(agent, e.latency_ms);
    countResult(current.all, e.policy_result);
    foldLatency(current.all, e.latency_ms);
    countResult(getOr(current.hosts, e.url_host, newCounts), e.policy_result);
    if (e.gen_ai !== null) foldGenAi(current.models, e.agent_id, e.gen_ai);
    if (e.deny_reason !== null) {
      const rule = getOr(current.rules, e.deny_reason, () => ({
        grain: MINUTE_MS, bucket_start: minute, rule_name: e.deny_reason ?? '', total_calls: 0, denied_calls: 0, dry_run_calls: 0,
      }));
      rule.total_calls += 1;
      if (e.policy_result === 'denied') rule.denied_calls += 1;
      else if (e.policy_result === 'allowed') rule.dry_run_calls += 1;
    }
  }
  return minutes;
}

/**
 * Folds the events a transaction stored into rollup rows for every grain, sorted by key so
 * concurrent writers lock rows in one order (no deadlocks on PostgreSQL).
 */
export function foldBatch(events: readonly EventRow[]): FoldedBatch {
  const agents = new Map<string, AgentAcc>();
  const hosts = new Map<string, Counts>();
  const rules = new Map<string, RuleRollup>();
  const models = new Map<string, ModelCounts>();
  for (const [minute, m] of foldMinutes(events)) {
    for (const [dim, acc] of m.models) models.set(keyOf(minute, dim), acc);
    for (const [agentId, acc] of m.agents) agents.set(keyOf(minute, agentId), acc);
    agents.set(keyOf(minute, ALL_AGENTS), m.all);
    for (const [host, acc] of m.hosts) hosts.set(keyOf(minute, host), acc);
    for (const [rule, acc] of m.rules) rules.set(keyOf(minute, rule), acc);
  }
  return {
    agents: rollUp(agents, newAgentAcc, (into, from) => {
      addCounts(into, from);
      into.latency_count += from.latency_count;
      into.latency_sum += from.latency_sum;
      mergeInto(into.hist, from.hist);
    }).map(([grain, bucket, agentId, a]) => ({
      grain, bucket_start: bucket, agent_id: agentId,
      total_calls: a.total_calls, allowed_calls: a.allowed_calls, denied_calls: a.denied_calls, error_calls: a.error_calls,
      latency_count: a.latency_count, latency_sum: a.latency_sum, latency_hist: serializeHistogram(a.hist),
    })),
    hosts: rollUp(hosts, newCounts, addCounts).map(([grain, bucket, host, c]) => ({ grain, bucket_start: bucket, url_host: host, ...c })),
    rules: rollUp(
      new Map([...rules].map(([k, r]) => [k, { total: r.total_calls, denied: r.denied_calls, dryRun: r.dry_run_calls }])),
      () => ({ total: 0, denied: 0, dryRun: 0 }),
      (into, from) => {
        into.total += from.total;
        into.denied += from.denied;
        into.dryRun += from.dryRun;
      },
    ).map(([grain, bucket, rule, r]) => ({ grain, bucket_start: bucket, rule_name: rule, total_calls: r.total, denied_calls: r.denied, dry_run_calls: r.dryRun })),
    models: rollUp(models, newModelCounts, addModelCounts).map(([grain, bucket, dim, c]) => {
      const [agentId = '', provider = UNKNOWN_MODEL, model = UNKNOWN_MODEL] = dim.split(SEP);
      return { grain, bucket_start: bucket, agent_id: agentId, provider, model, ...c };
    }),
  };
}

/** Minute accumulators → [grain, bucket, dimension, accumulator] for every grain, in key order. */
function rollUp<A>(minutes: Map<string, A>, make: () => A, merge: (into: A, from: A) => void): Array<[number, number, string, A]> {
  const out: Array<[number, number, string, A]> = [];
  for (const grain of ROLLUP_GRAINS) {
    const level = new Map<string, { bucket: number; dim: string; acc: A }>();
    for (const [key, acc] of minutes) {
      const [minute, dim] = splitKey(key);
      const bucket = minute - (minute % grain);
      if (grain === MINUTE_MS) {
        level.set(key, { bucket, dim, acc });
        continue;
      }
      const entry = getOr(level, keyOf(bucket, dim), () => ({ bucket, dim, acc: make() }));
      merge(entry.acc, acc);
    }
    const sorted = [...level.values()].sort((a, b) => a.bucket - b.bucket || (a.dim < b.dim ? -1 : a.dim > b.dim ? 1 : 0));
    for (const e of sorted) out.push([grain, e.bucket, e.dim, e.acc]);
  }
  return out;
}
