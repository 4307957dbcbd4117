import { useState } from 'preact/hooks';
import { api, errorText, unwrap } from '../api';
import { ErrorBanner, Section, Table, time, useAsync } from '../components';

const resources = ['agents', 'policies', 'events', 'alerts'] as const;
type Access = '' | 'read' | 'write';

export function Keys() {
  const { data, error, reload } = useAsync(() => api.GET('/v1/keys', { params: { query: { limit: 100 } } }).then(unwrap), []);
  const [actionError, setActionError] = useState<string>();
  const act = async (run: () => Promise<unknown>) => {
    try {
      await run();
      setActionError(undefined);
      reload();
    } catch (err) {
      setActionError(errorText(err));
    }
  };
  const [name, setName] = useState('');
  const [scope, setScope] = useState<'all' | 'read_only' | 'restricted'>('all');
  const [access, setAccess] = useState<Record<string, Access>>({});
  const [environment, setEnvironment] = useState<'live' | 'test'>('live');
  const [created, setCreated] = useState<{ name: string; key: string }>();
  const [formError, setFormError] = useState<string>();
  const create = async (e: Event) => {
    e.preventDefault();
    try {
      const granted = Object.fromEntries(Object.entries(access).filter(([, a]) => a !== '')) as Record<string, 'read' | 'write'>;
      const body = { name, environment, scope: scope === 'restricted' ? { kind: 'restricted' as const, resources: granted } : { kind: scope } };
      const key = unwrap(await api.POST('/v1/keys', { body }));
      setCreated({ name: key.name, key: key.key });
      setName('');
      setFormError(undefined);
      reload();
    } catch (err) {
      setFormError(errorText(err));
    }
  };
  return (
    <>
      <h1>API keys</h1>
      {created && (
        <div class="callout" role="status">
          <p>
            Key <strong>{created.name}</strong> created. Copy it now: it is shown this once.
          </p>
          <pre>
            <code data-testid="new-key">{created.key}</code>
          </pre>
          <div class="actions">
            <button type="button" class="secondary" onClick={() => void navigator.clipboard?.writeText(created.key).catch(() => undefined)}>
              Copy
            </button>
            <button type="button" onClick={() => setCreated(undefined)}>
              Done
            </button>
          </div>
        </div>
      )}
      <ErrorBanner error={error ?? actionError} />
      {data && (
        <Table
          caption="API keys"
          headers={['Name', 'Prefix', 'Scope', 'Last used', 'Expires', 'State', '']}
          rows={data.data.map((k) => ({
            key: k.id,
            cells: [
              k.name,
              <code>{k.key_prefix}…</code>,
              k.scope.kind === 'restricted' ? Object.entries(k.scope.resources).map(([r, a]) => `${r}:${a}`).join(', ') : k.scope.kind,
              time(k.last_used_at),
              time(k.expires_at),
              k.revoked_at ? 'revoked' : 'active',
              k.revoked_at ? (
                <button type="button" class="danger" onClick={() => void act(async () => unwrap(await api.DELETE('/v1/keys/{key_id}', { params: { path: { key_id: k.id } } })))}>
                  Delete<span class="visually-hidden"> {k.name}</span>
                </button>
              ) : (
                <button type="button" class="secondary" onClick={() => void act(async () => unwrap(await api.POST('/v1/keys/{key_id}/revoke', { params: { path: { key_id: k.id } } })))}>
                  Revoke<span class="visually-hidden"> {k.name}</span>
                </button>
              ),
            ],
          }))}
          empty="No keys yet."
        />
      )}
      <Section title="Create a key">
        <form onSubmit={(e) => void create(e)}>
          <div class="filters">
            <div class="field">
              <label for="key-name">Name</label>
              <input id="key-name" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
            </div>
            <div class="field">
              <label for="key-scope">Scope</label>
              <select id="key-scope" value={scope} onChange={(e) => setScope(e.currentTarget.value as typeof scope)}>
                <option value="all">full</option>
                <option value="read_only">read-only</option>
                <option value="restricted">restricted</option>
              </select>
            </div>
            <div class="field">
              <label for="key-env">Environment</label>
              <select id="key-env" value={environment} onChange={(e) => setEnvironment(e.currentTarget.value as 'live' | 'test')}>
                <option value="live">live</option>
                <option value="test">test</option>
              </select>
            </div>
          </div>
          {scope === 'restricted' && (
            <fieldset>
              <legend>Resources</legend>
              {resources.map((r) => (
                <div class="field" key={r}>
                  <label for={`res-${r}`}>{r}</label>
                  <select id={`res-${r}`} value={access[r] ?? ''} onChange={(e) => setAccess({ ...access, [r]: e.currentTarget.value as Access })}>
                    <option value="">none</option>
                    <option value="read">read</option>
                    <option value="write">write</option>
                  </select>
                </div>
              ))}
            </fieldset>
          )}
          <button type="submit">Create key</button>
        </form>
        <ErrorBanner error={formError} />
      </Section>
    </>
  );
}
