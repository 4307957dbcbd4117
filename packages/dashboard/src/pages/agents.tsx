import type { Agent } from '@corral/client';
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, unwrap } from '../api';
import { ErrorBanner, Section, Table, time, useAsync } from '../components';
import { Link } from '../router';
import { KillState, KillSwitch } from './kill-switch';

/** The list looks again every few seconds; an agent's own page follows its stream instead. */
const REFRESH_MS = 3000;

export function Agents() {
  const [cursor, setCursor] = useState<string>();
  const { data, error, reload } = useAsync(() => api.GET('/v1/agents', { params: { query: { limit: 50, ...(cursor ? { cursor } : {}) } } }).then(unwrap), [cursor]);
  useEffect(() => {
    const timer = setInterval(reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, [reload]);
  const [name, setName] = useState('');
  const [formError, setFormError] = useState<string>();
  const create = async (e: Event) => {
    e.preventDefault();
    try {
      unwrap(await api.POST('/v1/agents', { body: { name } }));
      setName('');
      setFormError(undefined);
      reload();
    } catch (err) {
      setFormError(errorText(err));
    }
  };
  return (
    <>
      <h1>Agents</h1>
      <ErrorBanner error={error} />
      {data && (
        <Table
          caption="Agents"
          headers={['Name', 'Status', 'Kill switch', 'Policy mode', 'Created', '']}
          rows={data.data.map((a: Agent) => ({
            key: a.id,
            cells: [
              <Link href={`/agents/${a.id}`}>{a.name}</Link>,
              a.status,
              <KillState active={a.kill_switch_active} />,
              a.active_policy_mode ?? 'no policy',
              time(a.created_at),
              <KillSwitch agent={a} onChange={reload} />,
            ],
          }))}
          empty="No agents yet: register one below, or let an SDK or OTLP exporter create it."
        />
      )}
      {data?.has_more && data.next_cursor && (
        <button type="button" class="secondary" onClick={() => setCursor(data.next_cursor ?? undefined)}>
          Next page
        </button>
      )}
      <Section title="Register an agent">
        <form class="inline" onSubmit={(e) => void create(e)}>
          <label for="agent-name">Name</label>
          <input id="agent-name" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          <button type="submit">Register</button>
        </form>
        <ErrorBanner error={formError} />
      </Section>
    </>
  );
}
