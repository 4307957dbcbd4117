import { useState } from 'preact/hooks';
import { api, unwrap } from '../api';
import { ErrorBanner, Table, time, useAsync } from '../components';

export function Audit() {
  const [action, setAction] = useState('');
  const [applied, setApplied] = useState('');
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const { data, error } = useAsync(
    () => api.GET('/v1/audit-log', { params: { query: { limit: 50, ...(applied ? { action: applied } : {}), ...(cursor ? { cursor } : {}) } } }).then(unwrap),
    [applied, cursor],
  );
  return (
    <>
      <h1>Audit log</h1>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          setCursors([]);
          setApplied(action.trim());
        }}
      >
        <label for="audit-action">Action</label>
        <input id="audit-action" placeholder="e.g. agent.kill_switch" value={action} onInput={(e) => setAction(e.currentTarget.value)} />
        <button type="submit">Filter</button>
      </form>
      <ErrorBanner error={error} />
      {data && (
        <Table
          caption="Audit log"
          headers={['Time', 'Actor', 'Action', 'Target', 'Reason']}
          rows={data.data.map((e) => ({ key: e.id, cells: [time(e.created_at), `${e.actor_type}: ${e.actor_id ?? ''}`, e.action, e.target_id ?? '', e.reason ?? ''] }))}
          empty="Nothing recorded."
        />
      )}
      <div class="actions">
        <button type="button" class="secondary" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous page
        </button>
        <button type="button" class="secondary" disabled={!data?.has_more} onClick={() => data?.next_cursor && setCursors([...cursors, data.next_cursor])}>
          Next page
        </button>
      </div>
    </>
  );
}
