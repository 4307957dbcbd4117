import { diffLines, type PolicyVersion, policyText } from '@corral/client';
import { useState } from 'preact/hooks';
import { api, errorText, unwrap } from '../api';
import { ErrorBanner, Section, Table, time, useAsync } from '../components';
import { Link } from '../router';

const example = `mode: dry_run
default: allow
rules:
  - name: no-payments
    deny:
      url: "api.stripe.com/v1/charges/**"
`;

export function Policies({ agentId }: { agentId: string }) {
  const { data, error, reload } = useAsync(
    () => api.GET('/v1/agents/{agent_id}/policies', { params: { path: { agent_id: agentId }, query: { limit: 100 } } }).then(unwrap),
    [agentId],
  );
  const versions: PolicyVersion[] = data?.data ?? [];
  const active = versions.find((v) => v.is_active);
  const [actionError, setActionError] = useState<string>();
  const activate = async (version: number) => {
    try {
      unwrap(await api.POST('/v1/agents/{agent_id}/policies/{version}/activate', { params: { path: { agent_id: agentId, version } } }));
      setActionError(undefined);
      reload();
    } catch (err) {
      setActionError(errorText(err));
    }
  };
  const [left, setLeft] = useState<number>();
  const [right, setRight] = useState<number>();
  const a = versions.find((v) => v.version === (left ?? versions[1]?.version));
  const b = versions.find((v) => v.version === (right ?? versions[0]?.version));
  const [yaml, setYaml] = useState(example);
  const [activateNew, setActivateNew] = useState(false);
  const [createError, setCreateError] = useState<string>();
  const create = async (e: Event) => {
    e.preventDefault();
    try {
      unwrap(await api.POST('/v1/agents/{agent_id}/policies', { params: { path: { agent_id: agentId } }, body: { yaml_content: yaml, activate: activateNew } }));
      setCreateError(undefined);
      reload();
    } catch (err) {
      setCreateError(errorText(err));
    }
  };
  const select = (id: string, label: string, value: number | undefined, set: (v: number) => void) => (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => set(Number(e.currentTarget.value))}>
        {versions.map((v) => (
          <option key={v.version} value={v.version}>
            v{v.version}
            {v.is_active ? ' (active)' : ''}
          </option>
        ))}
      </select>
    </div>
  );
  return (
    <>
      <p>
        <Link href={`/agents/${agentId}`}>← Agent</Link>
      </p>
      <h1>Policies</h1>
      <ErrorBanner error={error ?? actionError} />
      <Table
        caption="Policy versions"
        headers={['Version', 'State', 'Mode', 'Rules', 'Hash', 'Created', '']}
        rows={versions.map((v) => ({
          key: String(v.version),
          cells: [
            `v${v.version}`,
            v.is_active ? <span class="badge">active</span> : '',
            v.mode,
            v.policy.rules.length,
            <code>{v.hash.slice(0, 19)}…</code>,
            time(v.created_at),
            v.is_active ? (
              ''
            ) : (
              <button type="button" class="secondary" onClick={() => void activate(v.version)}>
                {active && v.version < active.version ? 'Roll back to' : 'Activate'} v{v.version}
              </button>
            ),
          ],
        }))}
        empty="No policy yet: every call is reported, none is blocked."
      />
      {versions.length >= 2 && a && b && (
        <Section title="Compare versions">
          <div class="filters">
            {select('diff-from', 'From', a.version, setLeft)}
            {select('diff-to', 'To', b.version, setRight)}
          </div>
          <pre class="diff" aria-label={`Changes from v${a.version} to v${b.version}`}>
            {diffLines(policyText(a.policy), policyText(b.policy)).map((l, i) => (
              <div key={i} class={l.op === '+' ? 'add' : l.op === '-' ? 'del' : ''}>
                {l.op} {l.text}
              </div>
            ))}
          </pre>
        </Section>
      )}
      <Section title="New version">
        <form onSubmit={(e) => void create(e)}>
          <label for="policy-yaml">Policy (YAML or JSON)</label>
          <textarea id="policy-yaml" rows={10} class="code" value={yaml} onInput={(e) => setYaml(e.currentTarget.value)} />
          <label class="check">
            <input type="checkbox" checked={activateNew} onChange={(e) => setActivateNew(e.currentTarget.checked)} /> Activate at once
          </label>
          <button type="submit">Create version</button>
        </form>
        <ErrorBanner error={createError} />
      </Section>
    </>
  );
}
