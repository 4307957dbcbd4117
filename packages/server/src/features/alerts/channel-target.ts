import type { AlertChannel } from '@corral/contracts';

/**
 * What a rule may send to. Checked when a rule is saved; where a webhook's host leads is
 * checked when connecting (webhook-sender.ts), since a name's addresses can change.
 */

// A dot-atom address (RFC 5322 without quoted local parts or address literals): what mail
// systems accept everywhere, and nothing that could break out of a header.
const LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LABEL = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;

export function emailProblem(address: string): string | undefined {
  const at = address.lastIndexOf('@');
  if (at <= 0 || address.length > 254) return 'must be an email address (name@example.com)';
  const local = address.slice(0, at);
  const labels = address.slice(at + 1).split('.');
  if (local.length > 64 || !LOCAL.test(local)) return 'must be an email address (name@example.com)';
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l)) || !/^[A-Za-z]{2,}$/.test(labels[labels.length - 1] ?? '')) {
    return 'must be an email address whose domain is a host name (name@example.com)';
  }
  return undefined;
}

export function webhookUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (!url.hostname) return 'must name a host';
  // Credentials in a URL would be shown to everyone who can read the rule.
  if (url.username || url.password) return 'must not carry a user name or password; authenticate with the signature';
  return undefined;
}

export function channelTargetProblem(channel: AlertChannel, target: string): string | undefined {
  return channel === 'email' ? emailProblem(target) : webhookUrlProblem(target);
}
