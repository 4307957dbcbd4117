import type { AlertAction, AlertConditionType, WebhookPayload } from '@corral/contracts';
import { toIso, toIsoOrNull } from '../../lib/clock.js';
import { describeCondition, formatValue, unitOf } from './alert-conditions.js';
import { excerpt } from './delivery-outcome.js';

/** What a notification tells: built once, when the transition happens, and stored with it. */
export interface NotificationFacts {
  readonly orgId: string;
  readonly rule: {
    readonly id: string;
    readonly condition_type: AlertConditionType;
    readonly threshold: number;
    readonly window_minutes: number;
    readonly action: AlertAction | null;
  };
  readonly agent: { readonly id: string; readonly name: string };
  readonly kind: 'firing' | 'resolved' | 'test';
  readonly value: number | null;
  readonly window: { readonly from: number; readonly to: number } | null;
  readonly historyId: string | null;
  readonly at: number;
}

/** The agent's address on the main host: the link in every message. */
export const agentUrl = (publicUrl: string, agentId: string): string => `${publicUrl}/v1/agents/${agentId}`;

export function buildPayload(f: NotificationFacts, publicUrl: string): WebhookPayload {
  const firing = f.kind !== 'resolved';
  const summary = f.kind === 'test'
    ? `Test notification for the ${f.rule.condition_type} rule on ${f.agent.name}: ${describeCondition(f.rule.condition_type, null, f.rule.threshold, f.rule.window_minutes, true)}`
    : `${f.kind === 'firing' ? 'Firing' : 'Resolved'} on ${f.agent.name}: ${describeCondition(f.rule.condition_type, f.value, f.rule.threshold, f.rule.window_minutes, firing)}`;
  return {
    type: `alert.${f.kind}`,
    timestamp: toIso(f.at),
    data: {
      org_id: f.orgId,
      alert: { ...f.rule },
      agent: { id: f.agent.id, name: f.agent.name, url: agentUrl(publicUrl, f.agent.id) },
      state: f.kind,
      value: f.value,
      threshold: f.rule.threshold,
      unit: unitOf(f.rule.condition_type),
      window_start: toIsoOrNull(f.window?.from ?? null),
      window_end: toIsoOrNull(f.window?.to ?? null),
      history_id: f.historyId,
      summary,
    },
  };
}

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

/** The email for a stored payload: a plain-text and an HTML body saying the same. */
export function renderEmail(p: WebhookPayload): { subject: string; text: string; html: string } {
  const d = p.data;
  const agentName = excerpt(d.agent.name, 100);
  const head = p.type === 'alert.test' ? 'TEST' : p.type === 'alert.firing' ? 'FIRING' : 'RESOLVED';
  const condition = d.alert.condition_type;
  const subject = p.type === 'alert.test'
    ? `[Corral] TEST: ${condition} alert on ${agentName}`
    : `[Corral] ${head}: ${condition} ${formatValue(condition, d.value ?? 0)} on ${agentName}`;
  const lines: Array<[string, string]> = [
    ['Agent', `${d.agent.name} (${d.agent.id})`],
    ['Condition', condition],
    ['Value', d.value === null ? 'none (test)' : formatValue(condition, d.value)],
    ['Threshold', formatValue(condition, d.threshold)],
    ['Window', d.window_start && d.window_end ? `${d.window_start} to ${d.window_end} (${d.alert.window_minutes} min)` : `${d.alert.window_minutes} min`],
    ...(d.alert.action === 'kill_switch' && p.type === 'alert.firing' ? [['Action', "the agent's kill switch is engaged; a person releases it"] as [string, string]] : []),
    ['Alert rule', d.alert.id],
    ['At', p.timestamp],
  ];
  const text = [d.summary, '', ...lines.map(([k, v]) => `${k}: ${v}`), '', `Agent: ${d.agent.url}`, ''].join('\n');
  const rows = lines.map(([k, v]) => `<tr><th align="left">${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join('');
  const html = `<!doctype html><html><body><p><strong>${escapeHtml(head)}</strong> ${escapeHtml(d.summary)}</p>`
    + `<table>${rows}</table><p><a href="${escapeHtml(d.agent.url)}">Open the agent</a></p></body></html>`;
  return { subject, text, html };
}
