import { api, unwrap } from '../api';
import { TimeSeriesChart } from '../chart';
import { ErrorBanner, num, Section, StatCard, Table, useAsync } from '../components';
import { Link } from '../router';
import { RuleHitsSection, TopHostsSection } from './aggregates';

export function Overview() {
  const { data, error } = useAsync(async () => {
    const [stats, series, hosts, ruleHits, agents, models] = await Promise.all([
      api.GET('/v1/dashboard/stats').then(unwrap),
      api.GET('/v1/dashboard/timeseries').then(unwrap),
      api.GET('/v1/dashboard/hosts', { params: { query: { limit: 10 } } }).then(unwrap),
      api.GET('/v1/dashboard/rule-hits').then(unwrap),
      api.GET('/v1/dashboard/agents').then(unwrap),
      api.GET('/v1/dashboard/models').then(unwrap),
    ]);
    return { stats, series, hosts, ruleHits, agents, models };
  }, []);
  return (
    <>
      <h1>Overview</h1>
      <p class="muted">The last 24 hours.</p>
      <ErrorBanner error={error} />
      {data && (
        <>
          <div class="stats" aria-label="Totals">
            <StatCard label="Calls" value={data.stats.total_calls} testId="stat-total" />
            <StatCard label="Allowed" value={data.stats.allowed_calls} testId="stat-allowed" />
            <StatCard label="Denied" value={data.stats.denied_calls} testId="stat-denied" />
            <StatCard label="Errors" value={data.stats.error_calls} testId="stat-errors" />
            <StatCard label="p95 latency" value={`${num(data.stats.p95_latency_ms)} ms`} testId="stat-p95" />
            <StatCard label="Active agents" value={`${data.stats.active_agents} / ${data.stats.total_agents}`} testId="stat-agents" />
          </div>
          <Section title="Calls over time">
            <TimeSeriesChart buckets={data.series} />
          </Section>
          <div class="columns">
            <TopHostsSection hosts={data.hosts} />
            <RuleHitsSection ruleHits={data.ruleHits} />
          </div>
          <Section title="Tokens and cost by model">
            <Table
              caption="Tokens and cost by model"
              headers={['Provider', 'Model', 'Calls', 'Input tokens', 'Output tokens', 'Cost (USD)']}
              rows={data.models.map((m) => ({
                key: `${m.provider}/${m.model}`,
                cells: [m.provider, m.model, m.calls, m.input_tokens, m.output_tokens, m.cost_usd === null ? 'no price' : m.cost_usd.toFixed(4)],
              }))}
              empty="No model calls in this window (they come from OTLP GenAI spans, or gen_ai on events)."
            />
          </Section>
          <Section title="Agents">
            <Table
              caption="Calls by agent"
              headers={['Agent', 'Calls', 'Denied', 'Errors', 'Avg ms', 'p95 ms']}
              rows={data.agents.map((a) => ({
                key: a.agent_id,
                cells: [<Link href={`/agents/${a.agent_id}`}>{a.agent_name}</Link>, a.total_calls, a.denied_calls, a.error_calls, num(a.avg_latency_ms), num(a.p95_latency_ms)],
              }))}
              empty="No agent sent calls in this window."
            />
          </Section>
        </>
      )}
    </>
  );
}
