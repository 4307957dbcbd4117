import type { SecretBox } from '../../lib/secret-box.js';
import type { AlertRuleRow } from './alert-store.js';

/** A rotated-out secret keeps signing beside the new one this long, so receivers can switch over. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 60 * 60 * 1000;

/** Binds a sealed secret to its rule: copied onto another rule's row, it does not open. */
export const secretContext = (orgId: string, ruleId: string): string => `alert-webhook-secret:${orgId}:${ruleId}`;

/** The secrets that sign a rule's webhooks now: the current one, then the previous during its grace. */
export function signingSecretsOf(rule: Pick<AlertRuleRow, 'org_id' | 'id' | 'webhook_secret' | 'previous_webhook_secret' | 'previous_secret_expires_at'>, box: SecretBox, now: number): string[] {
  const context = secretContext(rule.org_id, rule.id);
  const secrets: string[] = [];
  if (rule.webhook_secret) secrets.push(box.open(rule.webhook_secret, context));
  if (rule.previous_webhook_secret && (rule.previous_secret_expires_at ?? 0) > now) secrets.push(box.open(rule.previous_webhook_secret, context));
  return secrets;
}
