import nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import { SECOND_MS } from '../../lib/time.js';
import { type DeliveryOutcome, excerpt, failed } from './delivery-outcome.js';

export interface EmailMessage {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  readonly html: string;
  /** The notification's id, so the Message-ID stays the same on every attempt. */
  readonly id: string;
}

interface Deps {
  /** CORRAL_SMTP_URL; unset, every email attempt fails and says so. */
  smtpUrl: string | undefined;
  from: string;
  timeoutMs?: number;
}

/**
 * Email through the operator's SMTP server (nodemailer). Each attempt opens its own
 * connection: notifications are few, and a connection that went stale between them would only
 * fail an attempt. Timeouts match the webhook's, so an attempt never outlives its claim.
 */
export function createEmailSender({ smtpUrl, from, timeoutMs = 10 * SECOND_MS }: Deps) {
  const transport = smtpUrl === undefined ? undefined : nodemailer.createTransport({
    url: smtpUrl,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    dnsTimeout: timeoutMs,
  } satisfies SMTPTransport.Options);
  const domain = /@([^>\s]+)>?\s*$/.exec(from)?.[1] ?? 'corral.invalid';

  return {
    async send(message: EmailMessage): Promise<DeliveryOutcome> {
      if (!transport) return failed('email is not configured: set CORRAL_SMTP_URL');
      try {
        await transport.sendMail({
          from, to: message.to, subject: message.subject, text: message.text, html: message.html,
          messageId: `<${message.id}@${domain}>`,
        });
        return { ok: true, httpStatus: null, error: null };
      } catch (err) {
        const code = (err as { responseCode?: unknown }).responseCode;
        return failed(`${typeof code === 'number' ? `SMTP ${code}: ` : ''}${excerpt((err as Error).message ?? String(err))}`);
      }
    },
  };
}
export type EmailSender = ReturnType<typeof createEmailSender>;
