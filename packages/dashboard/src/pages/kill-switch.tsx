import type { Agent } from '@corral/client';
import { useState } from 'preact/hooks';
import { api, errorText, session, unwrap } from '../api';
import { Dialog, ErrorBanner } from '../components';

/** The kill switch button and its confirmation dialog; a reason is required to engage it. */
export function KillSwitch({ agent, onChange }: { agent: Agent; onChange: (agent: Agent) => void }) {
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const [error, setError] = useState<string>();
  const engaging = !agent.kill_switch_active;
  const allowed = session.value?.role === 'admin' || session.value?.role === 'owner';
  const confirm = async (e: Event) => {
    e.preventDefault();
    try {
      const body = { active: engaging, ...(reason.trim() ? { reason: reason.trim() } : {}) };
      const updated = unwrap(await api.POST('/v1/agents/{agent_id}/kill-switch', { params: { path: { agent_id: agent.id } }, body }));
      setOpen(false);
      setReason('');
      onChange(updated);
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <>
      <button type="button" class={engaging ? 'danger' : 'secondary'} disabled={!allowed} title={allowed ? undefined : 'Admins and owners only'} onClick={() => (setError(undefined), setOpen(true))}>
        {engaging ? 'Kill' : 'Resume'}
        <span class="visually-hidden"> {agent.name}</span>
      </button>
      <Dialog open={open} title={engaging ? `Kill ${agent.name}?` : `Resume ${agent.name}?`} onClose={() => setOpen(false)}>
        <form onSubmit={(e) => void confirm(e)}>
          <p>{engaging ? 'Every outbound call of this agent will be blocked by its SDK at once.' : 'The agent may make calls again, within its policy.'}</p>
          <label for="kill-reason">Reason{engaging ? '' : ' (optional)'}</label>
          <textarea id="kill-reason" required={engaging} maxLength={1000} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
          <ErrorBanner error={error} />
          <div class="actions">
            <button type="button" class="secondary" onClick={() => setOpen(false)}>
              Cancel
            </button>
            <button type="submit" class={engaging ? 'danger' : ''}>
              {engaging ? 'Engage kill switch' : 'Release kill switch'}
            </button>
          </div>
        </form>
      </Dialog>
    </>
  );
}

export const KillState = ({ active }: { active: boolean }) => (
  <span class={active ? 'badge badge-danger' : 'badge'} data-testid="kill-state">
    {active ? 'Killed' : 'Running'}
  </span>
);
