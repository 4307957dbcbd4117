/**
 * The dashboard benchmark's data: `count` events spread evenly over `days`, generated in time
 * order with fixed-seed randomness, shaped like real traffic (a few busy agents and hosts, a
 * long tail, 4% denied, 3% errors, 1% of events from OTLP traces).
 */
import type { EventRow } from '../packages/server/src/features/telemetry/index.js';

export const HOSTS = 50;
export const RULES = ['block-payments', 'no-deletes', 'pii-guard', 'rate-cap', 'prod-only', 'vendor-allowlist', 'model-budget', 'geo-fence'];

function rng(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

/** Index drawn with weight 1/(i+1): Zipf with exponent 1. */
function zipf(n: number, random: () => number): () => number {
  const weights = Array.from({ length: n }, (_, i) => 1 / (i + 1));
  const total = weights.reduce((a, b) => a + b, 0);
  const cumulative: number[] = [];
  let acc = 0;
  for (const w of weights) cumulative.push((acc += w / total));
  return () => {
    const r = random();
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cumulative[mid] ?? 1) < r) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

export const hostName = (i: number) => `api${i}.vendor${i % 7}.example.com`;

export function* generateEvents(orgId: string, agentIds: string[], count: number, start: number, end: number, batch: number): Generator<EventRow[]> {
  const random = rng(2024);
  const agentOf = zipf(agentIds.length, random);
  const hostOf = zipf(HOSTS, random);
  const span = end - start;
  let traceId: string | null = null;
  let traceLeft = 0;
  let rows: EventRow[] = [];
  for (let i = 0; i < count; i++) {
    const ts = start + Math.floor((i * span) / count);
    const r = random();
    const result = r < 0.04 ? 'denied' : r < 0.07 ? 'error' : 'allowed';
    const m = random();
    const method = m < 0.6 ? 'GET' : m < 0.9 ? 'POST' : m < 0.95 ? 'PUT' : 'DELETE';
    const s = random();
    const status = result === 'denied' ? null : result === 'error' ? (s < 0.5 ? 500 : s < 0.8 ? 502 : 503)
      : s < 0.85 ? 200 : s < 0.91 ? 201 : s < 0.96 ? 404 : s < 0.99 ? 400 : 429;
    const latency = result === 'denied' ? null : Math.max(1, Math.round(Math.exp(3.5 + 0.9 * (random() + random() + random() - 1.5))));
    const dryRun = result === 'allowed' && random() < 0.01;
    if (traceLeft === 0 && random() < 0.002) {
      traceId = Array.from({ length: 4 }, () => Math.floor(random() * 2 ** 32).toString(16).padStart(8, '0')).join('');
      traceLeft = 5;
    }
    const inTrace = traceLeft > 0;
    if (inTrace) traceLeft--;
    rows.push({
      org_id: orgId, ts, request_id: `${i.toString(36)}-${Math.floor(random() * 2 ** 32).toString(36)}`,
      agent_id: agentIds[agentOf()]!, method, url_host: hostName(hostOf()), url_path: `/v1/resource${i % 13}/{id}`,
      status_code: status, latency_ms: latency, policy_result: result,
      deny_reason: result === 'denied' || dryRun ? RULES[Math.floor(random() * RULES.length)]! : null,
      trace_id: inTrace ? traceId : null, span_id: inTrace ? (i % 2 ** 32).toString(16).padStart(16, '0') : null,
      gen_ai: null, received_at: ts,
    });
    if (rows.length === batch) {
      yield rows;
      rows = [];
    }
  }
  if (rows.length > 0) yield rows;
}
