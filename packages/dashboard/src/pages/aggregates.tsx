import type { paths } from '@corral/client';
import { Section, Table } from '../components';

type Answer<P extends keyof paths> = paths[P] extends { get: { responses: { 200: { content: { 'application/json': infer T } } } } } ? T : never;
type TopHosts = Answer<'/v1/dashboard/hosts'>;
type RuleHits = Answer<'/v1/dashboard/rule-hits'>;

/** The most-called hosts of a window: the overview's for the organization, an agent page's for the agent. */
export function TopHostsSection({ hosts }: { hosts: TopHosts }) {
  return (
    <Section title="Top hosts">
      <Table
        caption="Top hosts"
        headers={['Host', 'Calls', 'Allowed', 'Denied', 'Errors']}
        rows={hosts.map((h) => ({ key: h.url_host, cells: [h.url_host, h.call_count, h.allowed_count, h.denied_count, h.error_count] }))}
        empty="No calls in this window."
      />
    </Section>
  );
}

/** Policy rules by the calls they matched (denied, or let through in dry_run). */
export function RuleHitsSection({ ruleHits }: { ruleHits: RuleHits }) {
  return (
    <Section title="Rule hits">
      <Table
        caption="Rule hits"
        headers={['Rule', 'Hits', 'Denied', 'Dry run']}
        rows={ruleHits.map((r) => ({ key: r.rule_name, cells: [r.rule_name, r.total, r.denied, r.dry_run] }))}
        empty="No rule matched in this window."
      />
    </Section>
  );
}
