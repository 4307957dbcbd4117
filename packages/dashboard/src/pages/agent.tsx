import type { Agent, DashboardEvent } from '@corral/client';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, unwrap } from '../api';
import { ErrorBanner, num, Section, StatCard, Table, time, useAsync } from '../components';
import { Link } from '../router';
import { RuleHitsSection, TopHostsSection } from './aggregates';
import { KillState, KillSwitch } from './kill-switch';

interface Filters {
  method: string;
  url_host: string;
  status_code: string;
  policy_result: '' | 'allowed' | 'denied' | 'error';
  from: string;
  to: string;
  trace_id: string;
}

const noFilters: Filters = { method: '', url_host: '', status_code: '', policy_result: '', from: '', to: '', trace_id: '' };

/** datetime-local gives "2026-11-23T21:54" in local time; the API wants RFC 3339. */
const rfc3339 = (local: string): string | undefined => (local ? new Date(local).toISOString() : undefined);

function query(agentId: string, f: Filters) {
  const from = rfc3339(f.from);
  const to = rfc3339(f.to);
  return {
    agent_id: agentId,
    ...(f.method ? { method: f.method } : {}),
    ...(f.url_host ? { url_host: f.url_host } : {}),
    ...(f.status_code ? { status_code: Number(f.status_code) } : {}),
    ...(f.policy_result ? { policy_result: f.policy_result } : {}),
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
    ...(f.trace_id ? { trace_id: f.trace_id } : {}),
  };
}

const eventRow = (e: DashboardEvent) => ({
  key: e.request_id,
  cells: [time(e.timestamp), e.method, e.url_host, e.url_path, e.status_code ?? '—', e.latency_ms ?? '—', <span class={`result result-${e.policy_result}`}>{e.policy_result}</span>, e.deny_reason ?? ''],
});
const eventHeaders = ['Time', 'Method', 'Host', 'Path', 'Status', 'ms', 'Result', 'Rule'];

/** The agent, kept current by its dashboard stream: a kill switch flipped anywhere shows here at once. */
function useLiveAgent(agentId: string) {
  const [agent, setAgent] = useState<Agent>();
  const [error, setError] = useState<string>();
  /** Counts the stream's `telemetry` hints: new events of this agent were stored. */
  const [stored, setStored] = useState(0);
  useEffect(() => {
    let live = true;
    const load = () =>
      api
        .GET('/v1/agents/{agent_id}', { params: { path: { agent_id: agentId } } })
        .then(unwrap)
        .then((a) => live && setAgent(a), (err: unknown) => live && setError(String((err as Error).message)));
    void load();
    const stream = new EventSource(`/v1/agents/${encodeURIComponent(agentId)}/control/dashboard-stream`, { withCredentials: true });
    stream.addEventListener('kill_switch', (e) => {
      const { active } = JSON.parse((e as MessageEvent<string>).data) as { active: boolean };
      setAgent((a) => (a ? { ...a, kill_switch_active: active } : a));
    });
    stream.addEventListener('policy_updated', () => void load());
    stream.addEventListener('telemetry', () => setStored((n) => n + 1));
    return () => {
      live = false;
      stream.close();
    };
  }, [agentId]);
  return { agent, setAgent, error, stored };
}

/**
 * The agent's SDK instances and what each has applied. Instances report to the service, not to
 * the dashboard stream, so the list is read again every 3 seconds and whenever the agent changes
 * here (kill switch, policy).
 */
function Instances({ agent }: { agent: Agent }) {
  const instances = useAsync(
    () => api.GET('/v1/agents/{agent_id}/instances', { params: { path: { agent_id: agent.id }, query: { limit: 100 } } }).then(unwrap),
    [agent],
  );
  const { reload } = instances;
  useEffect(() => {
    const timer = setInterval(reload, 3000);
    return () => clearInterval(timer);
  }, [reload]);
  const all = instances.data?.data ?? [];
  const connected = all.filter((i) => i.connected);
  const stopped = connected.filter((i) => i.kill_switch_active).length;
  const summary = agent.kill_switch_active
    ? `${stopped} of ${connected.length} connected instance${connected.length === 1 ? '' : 's'} stopped`
    : `${connected.length} of ${all.length} instance${all.length === 1 ? '' : 's'} connected`;
  return (
    <Section title="Instances">
      <ErrorBanner error={instances.error} />
      {instances.data && (
        <>
          <p data-testid="instances-summary">{summary}</p>
          <Table
            caption="SDK instances"
            headers={['Instance', 'Host', 'SDK', 'Transport', 'Connected', 'Policy', 'Kill switch', 'Applied', 'Last seen']}
            rows={all.map((i) => ({
              key: i.instance_id,
              cells: [
                <code>{i.instance_id}</code>, i.hostname, i.sdk_version, i.transport, i.connected ? 'yes' : i.closed_at ? 'closed' : 'no',
                i.policy_version === null ? '—' : `v${i.policy_version} (seq ${i.policy_sequence})`,
                <span class={i.kill_switch_active ? 'badge badge-danger' : 'badge'}>{i.kill_switch_active ? 'Stopped' : 'Running'}</span>, i.applied_at ? time(i.applied_at) : '—', time(i.last_seen_at),
              ],
            }))}
            empty="No SDK instance has reported yet."
          />
        </>
      )}
    </Section>
  );
}

export function AgentPage({ agentId }: { agentId: string }) {
  const { agent, setAgent, error, stored } = useLiveAgent(agentId);
  const stats = useAsync(() => api.GET('/v1/dashboard/agents').then(unwrap).then((all) => all.find((s) => s.agent_id === agentId)), [agentId]);
  // The agent's own hosts and rule hits, last 24 hours.
  const aggregates = useAsync(async () => {
    const query = { agent_id: agentId };
    const [hosts, ruleHits] = await Promise.all([
      api.GET('/v1/dashboard/hosts', { params: { query: { ...query, limit: 10 } } }).then(unwrap),
      api.GET('/v1/dashboard/rule-hits', { params: { query } }).then(unwrap),
    ]);
    return { hosts, ruleHits };
  }, [agentId]);
  const [draft, setDraft] = useState<Filters>(noFilters);
  const [filters, setFilters] = useState<Filters>(noFilters);
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const events = useAsync(
    () => api.GET('/v1/dashboard/events', { params: { query: { ...query(agentId, filters), limit: 20, ...(cursor ? { cursor } : {}) } } }).then(unwrap),
    [agentId, filters, cursor],
  );
  const [tailing, setTailing] = useState(false);
  const [tail, setTail] = useState<DashboardEvent[]>([]);
  const since = useRef(new Date().toISOString());
  const seen = useRef(new Set<string>());
  useEffect(() => {
    if (!tailing) return;
    since.current = new Date(Date.now() - 5000).toISOString();
    seen.current = new Set();
    setTail([]);
  }, [tailing, agentId, filters]);
  // Reads only when the agent's dashboard stream says events were stored (and once at the start).
  useEffect(() => {
    if (!tailing) return;
    let live = true;
    void api
      .GET('/v1/dashboard/events', { params: { query: { ...query(agentId, { ...filters, from: '', to: '' }), from: since.current, limit: 100 } } })
      .then(unwrap)
      .then((page) => {
        if (!live) return;
        const fresh = page.data.filter((e) => !seen.current.has(e.request_id));
        for (const e of fresh) seen.current.add(e.request_id);
        if (fresh.length > 0) setTail((t) => [...fresh, ...t].slice(0, 200));
      }, () => undefined);
    return () => {
      live = false;
    };
  }, [tailing, agentId, filters, stored]);

  const apply = (e: Event) => {
    e.preventDefault();
    setCursors([]);
    setFilters(draft);
  };
  const field = (name: keyof Filters, label: string, type = 'text') => (
    <div class="field">
      <label for={`f-${name}`}>{label}</label>
      <input id={`f-${name}`} name={name} type={type} value={draft[name]} onInput={(e) => setDraft({ ...draft, [name]: e.currentTarget.value })} />
    </div>
  );

  return (
    <>
      <p>
        <Link href="/agents">← Agents</Link>
      </p>
      <ErrorBanner error={error} />
      {agent && (
        <>
          <div class="section-head">
            <h1>{agent.name}</h1>
            <KillState active={agent.kill_switch_active} />
            <KillSwitch agent={agent} onChange={setAgent} />
          </div>
          <p class="muted">
            {agent.status} · policy {agent.active_policy_mode ?? 'none'} · <Link href={`/agents/${agent.id}/policies`}>Policies</Link> · id <code>{agent.id}</code>
          </p>
        </>
      )}
      <div class="stats" aria-label="Agent totals, last 24 hours">
        <StatCard label="Calls" value={stats.data?.total_calls ?? 0} testId="agent-calls" />
        <StatCard label="Denied" value={stats.data?.denied_calls ?? 0} />
        <StatCard label="Errors" value={stats.data?.error_calls ?? 0} />
        <StatCard label="Avg latency" value={`${num(stats.data?.avg_latency_ms ?? 0)} ms`} />
        <StatCard label="p95 latency" value={`${num(stats.data?.p95_latency_ms ?? 0)} ms`} />
      </div>

      <ErrorBanner error={aggregates.error} />
      {aggregates.data && (
        <div class="columns">
          <TopHostsSection hosts={aggregates.data.hosts} />
          <RuleHitsSection ruleHits={aggregates.data.ruleHits} />
        </div>
      )}

      {agent && <Instances agent={agent} />}

      <Section title="Events">
        <form class="filters" onSubmit={apply} aria-label="Event filters">
          {field('method', 'Method')}
          {field('url_host', 'Host')}
          {field('status_code', 'Status', 'number')}
          <div class="field">
            <label for="f-policy_result">Result</label>
            <select id="f-policy_result" value={draft.policy_result} onChange={(e) => setDraft({ ...draft, policy_result: e.currentTarget.value as Filters['policy_result'] })}>
              <option value="">any</option>
              <option value="allowed">allowed</option>
              <option value="denied">denied</option>
              <option value="error">error</option>
            </select>
          </div>
          {field('from', 'From', 'datetime-local')}
          {field('to', 'To', 'datetime-local')}
          {field('trace_id', 'Trace id')}
          <div class="actions">
            <button type="submit">Apply filters</button>
            <button type="button" class="secondary" onClick={() => (setDraft(noFilters), setFilters(noFilters), setCursors([]))}>
              Clear
            </button>
          </div>
        </form>
        <ErrorBanner error={events.error} />
        {events.data && <Table caption="Events" headers={eventHeaders} rows={events.data.data.map(eventRow)} empty="No events match." />}
        <div class="actions">
          <button type="button" class="secondary" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
            Previous page
          </button>
          <button type="button" class="secondary" disabled={!events.data?.has_more} onClick={() => events.data?.next_cursor && setCursors([...cursors, events.data.next_cursor])}>
            Next page
          </button>
        </div>
      </Section>

      <Section
        title="Live tail"
        actions={
          <button type="button" class="secondary" aria-pressed={tailing} onClick={() => setTailing(!tailing)}>
            {tailing ? 'Stop' : 'Start'} live tail
          </button>
        }
      >
        {tailing ? <Table caption="Live events" headers={eventHeaders} rows={tail.map(eventRow)} empty="Waiting for events…" /> : <p class="muted">New events appear here as they arrive.</p>}
      </Section>
    </>
  );
}
