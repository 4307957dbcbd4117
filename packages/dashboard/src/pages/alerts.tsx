import type { Alert } from '@corral/client';
import { useState } from 'preact/hooks';
import { api, errorText, unwrap } from '../api';
import { ErrorBanner, num, Section, Table, time, useAsync } from '../components';
import { Link } from '../router';

const conditions = ['error_rate', 'latency_p99', 'denied_rate', 'volume_drop'] as const;
const HOUR_MS = 3600_000;

function useActions(reload: () => void) {
  const [error, setError] = useState<string>();
  const act = async (run: () => Promise<unknown>) => {
    try {
      await run();
      setError(undefined);
      reload();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return { error, act };
}

const path = (id: string) => ({ params: { path: { alert_id: id } } });

function AlertButtons({ alert, act, onTested }: { alert: Alert; act: (run: () => Promise<unknown>) => Promise<void>; onTested?: (status: string) => void }) {
  return (
    <div class="actions">
      <button type="button" class="secondary" onClick={() => void act(async () => unwrap(await api.POST('/v1/alerts/{alert_id}/toggle', { ...path(alert.id), body: { is_enabled: !alert.is_enabled } })))}>
        {alert.is_enabled ? 'Disable' : 'Enable'}
      </button>
      {alert.muted_until && Date.parse(alert.muted_until) > Date.now() ? (
        <button type="button" class="secondary" onClick={() => void act(async () => unwrap(await api.POST('/v1/alerts/{alert_id}/unmute', path(alert.id))))}>
          Unmute
        </button>
      ) : (
        <button
          type="button"
          class="secondary"
          onClick={() => void act(async () => unwrap(await api.POST('/v1/alerts/{alert_id}/mute', { ...path(alert.id), body: { until: new Date(Date.now() + HOUR_MS).toISOString() } })))}
        >
          Mute 1h
        </button>
      )}
      <button
        type="button"
        class="secondary"
        onClick={() =>
          void act(async () => {
            const n = unwrap(await api.POST('/v1/alerts/{alert_id}/test', path(alert.id)));
            onTested?.(`Test notification to ${n.recipient}: ${n.status}${n.error ? ` (${n.error})` : ''}`);
          })
        }
      >
        Send test
      </button>
    </div>
  );
}

export function Alerts() {
  const { data, error, reload } = useAsync(() => api.GET('/v1/alerts', { params: { query: { limit: 100 } } }).then(unwrap), []);
  const agents = useAsync(() => api.GET('/v1/agents', { params: { query: { limit: 100 } } }).then(unwrap), []);
  const { error: actionError, act } = useActions(reload);
  const [tested, setTested] = useState<string>();
  const [form, setForm] = useState({ agent_id: '', condition_type: 'error_rate' as (typeof conditions)[number], threshold: '5', window_minutes: '15', channel: 'email' as 'email' | 'webhook', channel_target: '', cooldown_minutes: '60' });
  const [formError, setFormError] = useState<string>();
  const create = async (e: Event) => {
    e.preventDefault();
    try {
      const body = {
        agent_id: form.agent_id || (agents.data?.data[0]?.id ?? ''),
        condition_type: form.condition_type,
        threshold: Number(form.threshold),
        window_minutes: Number(form.window_minutes),
        channel: form.channel,
        channel_target: form.channel_target,
        cooldown_minutes: Number(form.cooldown_minutes),
      };
      unwrap(await api.POST('/v1/alerts', { body }));
      setFormError(undefined);
      setForm({ ...form, channel_target: '' });
      reload();
    } catch (err) {
      setFormError(errorText(err));
    }
  };
  const input = (name: keyof typeof form, label: string, type = 'text') => (
    <div class="field">
      <label for={`alert-${name}`}>{label}</label>
      <input id={`alert-${name}`} type={type} required value={form[name]} onInput={(e) => setForm({ ...form, [name]: e.currentTarget.value })} />
    </div>
  );
  return (
    <>
      <h1>Alerts</h1>
      <ErrorBanner error={error ?? actionError} />
      {tested && (
        <p class="callout" role="status">
          {tested}
        </p>
      )}
      {data && (
        <Table
          caption="Alert rules"
          headers={['Agent', 'Condition', 'Channel', 'State', 'Enabled', 'Muted until', '']}
          rows={data.data.map((a) => ({
            key: a.id,
            cells: [
              <Link href={`/alerts/${a.id}`}>{a.agent_name ?? a.agent_id}</Link>,
              `${a.condition_type} > ${a.threshold} over ${a.window_minutes}m`,
              `${a.channel}: ${a.channel_target}`,
              a.state ?? '—',
              a.is_enabled ? 'yes' : 'no',
              time(a.muted_until),
              <AlertButtons alert={a} act={act} onTested={setTested} />,
            ],
          }))}
          empty="No alert rules yet."
        />
      )}
      <Section title="New alert rule">
        <form onSubmit={(e) => void create(e)}>
          <div class="filters">
            <div class="field">
              <label for="alert-agent">Agent</label>
              <select id="alert-agent" value={form.agent_id} onChange={(e) => setForm({ ...form, agent_id: e.currentTarget.value })}>
                {(agents.data?.data ?? []).map((a) => (
                  <option key={a.id} value={a.id}>
                    {a.name}
                  </option>
                ))}
              </select>
            </div>
            <div class="field">
              <label for="alert-condition">Condition</label>
              <select id="alert-condition" value={form.condition_type} onChange={(e) => setForm({ ...form, condition_type: e.currentTarget.value as (typeof conditions)[number] })}>
                {conditions.map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
            </div>
            {input('threshold', 'Threshold', 'number')}
            {input('window_minutes', 'Window (minutes)', 'number')}
            <div class="field">
              <label for="alert-channel">Channel</label>
              <select id="alert-channel" value={form.channel} onChange={(e) => setForm({ ...form, channel: e.currentTarget.value as 'email' | 'webhook' })}>
                <option value="email">email</option>
                <option value="webhook">webhook</option>
              </select>
            </div>
            {input('channel_target', form.channel === 'email' ? 'Email address' : 'Webhook URL')}
            {input('cooldown_minutes', 'Cooldown (minutes)', 'number')}
          </div>
          <button type="submit">Create alert</button>
        </form>
        <ErrorBanner error={formError} />
      </Section>
    </>
  );
}

export function AlertPage({ alertId }: { alertId: string }) {
  const alert = useAsync(() => api.GET('/v1/alerts/{alert_id}', path(alertId)).then(unwrap), [alertId]);
  const history = useAsync(() => api.GET('/v1/alerts/{alert_id}/history', { params: { path: { alert_id: alertId }, query: { limit: 50 } } }).then(unwrap), [alertId]);
  const ledger = useAsync(() => api.GET('/v1/alerts/{alert_id}/notifications', { params: { path: { alert_id: alertId }, query: { limit: 50 } } }).then(unwrap), [alertId]);
  const reload = () => (alert.reload(), ledger.reload());
  const { error, act } = useActions(reload);
  const [tested, setTested] = useState<string>();
  const a = alert.data;
  return (
    <>
      <p>
        <Link href="/alerts">← Alerts</Link>
      </p>
      <ErrorBanner error={alert.error ?? error} />
      {a && (
        <>
          <h1>
            {a.condition_type} &gt; {a.threshold} on {a.agent_name ?? a.agent_id}
          </h1>
          <p class="muted">
            window {a.window_minutes}m · {a.channel} {a.channel_target} · cooldown {a.cooldown_minutes}m · {a.is_enabled ? 'enabled' : 'disabled'} · state {a.state ?? '—'} ·{' '}
            {a.notification_count} notifications
          </p>
          <AlertButtons alert={a} act={act} onTested={setTested} />
          {tested && (
            <p class="callout" role="status">
              {tested}
            </p>
          )}
        </>
      )}
      <Section title="History">
        <Table
          caption="Alert history"
          headers={['Time', 'State', 'Value', 'Threshold']}
          rows={(history.data?.data ?? []).map((h) => ({ key: h.id, cells: [time(h.created_at), h.state, num(h.value), h.threshold] }))}
          empty="It has not fired yet."
        />
      </Section>
      <Section title="Notifications">
        <Table
          caption="Notification ledger"
          headers={['Time', 'Kind', 'Channel', 'Recipient', 'Status', 'Attempts', 'Error']}
          rows={(ledger.data?.data ?? []).map((n) => ({ key: n.id, cells: [time(n.created_at), n.kind, n.channel, n.recipient, n.status, n.attempts, n.error ?? ''] }))}
          empty="Nothing sent yet."
        />
      </Section>
    </>
  );
}
