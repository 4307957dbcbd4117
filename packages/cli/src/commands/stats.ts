import { unwrap } from '@corral/client';
import type { Command as Commander } from 'commander';
import { clientFor } from '../api.js';
import { fit, number, shortTime, sparkline, table } from '../format.js';
import { print } from '../print.js';

export function registerStats(program: Commander): void {
  program
    .command('stats')
    .description('A terminal summary: calls, latency, the time series as a sparkline, top hosts, rule hits')
    .option('--from <time>', 'RFC 3339 start (default 24 hours before --to)')
    .option('--to <time>', 'RFC 3339 end (default now)')
    .action(async (o: { from?: string; to?: string }, command: Commander) => {
      const client = clientFor(command);
      const query = { ...(o.from ? { from: o.from } : {}), ...(o.to ? { to: o.to } : {}) };
      const [stats, series, hosts, ruleHits] = await Promise.all([
        client.GET('/v1/dashboard/stats', { params: { query } }).then(unwrap),
        client.GET('/v1/dashboard/timeseries', { params: { query } }).then(unwrap),
        client.GET('/v1/dashboard/hosts', { params: { query: { ...query, limit: 5 } } }).then(unwrap),
        client.GET('/v1/dashboard/rule-hits', { params: { query } }).then(unwrap),
      ]);
      const first = series[0]?.bucket;
      const last = series[series.length - 1]?.bucket;
      print(command, { stats, timeseries: series, hosts, rule_hits: ruleHits }, () =>
        [
          `calls    ${stats.total_calls}  (allowed ${stats.allowed_calls}, denied ${stats.denied_calls}, errors ${stats.error_calls})`,
          `latency  avg ${number(stats.avg_latency_ms)} ms  p50 ${number(stats.p50_latency_ms)}  p95 ${number(stats.p95_latency_ms)}  p99 ${number(stats.p99_latency_ms)}`,
          `agents   ${stats.active_agents} active of ${stats.total_agents}`,
          '',
          `calls    ${sparkline(fit(series.map((b) => b.total)))}`,
          `denied   ${sparkline(fit(series.map((b) => b.denied)))}`,
          `         ${shortTime(first)} .. ${shortTime(last)} UTC`,
          '',
          table(['host', 'calls', 'allowed', 'denied', 'errors'], hosts.map((h) => [h.url_host, h.call_count, h.allowed_count, h.denied_count, h.error_count]), 'no hosts'),
          '',
          table(['rule', 'hits', 'denied', 'dry run'], ruleHits.slice(0, 5).map((r) => [r.rule_name, r.total, r.denied, r.dry_run]), 'no rule hits'),
        ].join('\n'),
      );
    });

  program
    .command('models')
    .description('Tokens and cost by model (from GenAI telemetry: OTLP spans or gen_ai on events)')
    .option('--from <time>', 'RFC 3339 start (default 24 hours before --to)')
    .option('--to <time>', 'RFC 3339 end (default now)')
    .action(async (o: { from?: string; to?: string }, command: Commander) => {
      const query = { ...(o.from ? { from: o.from } : {}), ...(o.to ? { to: o.to } : {}) };
      const models = unwrap(await clientFor(command).GET('/v1/dashboard/models', { params: { query } }));
      print(command, models, () =>
        table(
          ['provider', 'model', 'calls', 'input tokens', 'output tokens', 'cached', 'reasoning', 'cost usd'],
          models.map((m) => [m.provider, m.model, m.calls, m.input_tokens, m.output_tokens, m.cached_input_tokens, m.reasoning_tokens, m.cost_usd === null ? null : m.cost_usd.toFixed(4)]),
          'no model calls in this window',
        ),
      );
    });
}
