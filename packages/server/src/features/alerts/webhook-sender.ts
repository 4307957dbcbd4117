import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { judgeAddress } from '../../lib/address-policy.js';
import { SECOND_MS } from '../../lib/time.js';
import { type DeliveryOutcome, excerpt, failed } from './delivery-outcome.js';
import { parseRetryAfter } from './retry-schedule.js';
import { signatureHeaders } from './webhook-signature.js';

/** How long one webhook attempt may take, from resolving the name to the last byte of the answer. */
export const WEBHOOK_TIMEOUT_MS = 10 * SECOND_MS;
const USER_AGENT = 'Corral-Webhooks/1';
const MAX_ERROR_BODY = 2048;

export interface ResolvedAddress {
  readonly address: string;
  readonly family: number;
}
/** A name's addresses, as the system resolver gives them; injectable so tests can play a hostile DNS. */
export type Resolve = (hostname: string) => Promise<ResolvedAddress[]>;
const systemResolve: Resolve = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface WebhookRequest {
  readonly url: string;
  /** `webhook-id`: the notification's id, the same on every attempt so receivers can drop repeats. */
  readonly id: string;
  readonly body: string;
  /** Every secret that signs: the current one, and a rotated-out one during its grace day. */
  readonly secrets: readonly string[];
  readonly timestampSeconds: number;
}

interface Deps {
  allowPrivate: boolean;
  timeoutMs?: number;
  resolve?: Resolve;
  now?: () => number;
}

class RefusedAddress extends Error {}

const refusal = (reason: string, allowPrivate: boolean) =>
  `refused: ${reason}${allowPrivate ? '' : '; webhooks go to public addresses only (CORRAL_WEBHOOK_ALLOW_PRIVATE=1 allows private networks)'}`;

/**
 * POSTs signed JSON. The SSRF guard sits in the socket's own name lookup: every address the
 * name resolves to is checked, and the connection goes to a checked address, so a name that
 * answers differently the second time (DNS rebinding) has no second time. Literal IPs are
 * checked before connecting. Redirects are never followed: a 3xx is a failed attempt.
 */
export function createWebhookSender({ allowPrivate, timeoutMs = WEBHOOK_TIMEOUT_MS, resolve = systemResolve, now = Date.now }: Deps) {
  const guardedLookup: LookupFunction = (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        if (addresses.length === 0) throw new RefusedAddress(`${hostname} has no address`);
        for (const a of addresses) {
          const verdict = judgeAddress(a.address, allowPrivate);
          if (!verdict.allowed) throw new RefusedAddress(refusal(`${hostname} resolves to ${verdict.reason}`, allowPrivate));
        }
        const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
        if (options.all) callback(null, wanted);
        else if (wanted[0]) callback(null, wanted[0].address, wanted[0].family);
        else callback(Object.assign(new Error(`${hostname} has no IPv${options.family} address`), { code: 'ENOTFOUND' }), '', 0);
      },
    ).catch((err: unknown) => callback(err as NodeJS.ErrnoException, '', 0));
  };

  function send(request: WebhookRequest): Promise<DeliveryOutcome> {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return Promise.resolve(failed('the URL is not valid'));
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) {
      const verdict = judgeAddress(host, allowPrivate);
      if (!verdict.allowed) return Promise.resolve(failed(refusal(verdict.reason, allowPrivate)));
    }
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      ...signatureHeaders(request.secrets, request.id, request.timestampSeconds, request.body),
    };
    return new Promise<DeliveryOutcome>((resolveOutcome) => {
      let settled = false;
      const settle = (outcome: DeliveryOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolveOutcome(outcome);
      };
      const client = url.protocol === 'https:' ? https : http;
      const req = client.request(
        {
          method: 'POST',
          protocol: url.protocol,
          hostname: host,
          port: url.port || undefined,
          path: `${url.pathname}${url.search}`,
          headers: { ...headers, 'content-length': Buffer.byteLength(request.body) },
          agent: false,
          lookup: guardedLookup,
        },
        (res) => {
          const status = res.statusCode ?? 0;
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            if (text.length < MAX_ERROR_BODY) text += chunk;
          });
          res.on('error', (err) => settle(failed(`the answer broke off: ${err.message}`, status)));
          res.on('end', () => {
            if (status >= 200 && status < 300) return settle({ ok: true, httpStatus: status, error: null });
            const retryAfter = parseRetryAfter(headerText(res.headers['retry-after']), now());
            if (status >= 300 && status < 400) {
              return settle(failed(`HTTP ${status}: redirect to ${excerpt(headerText(res.headers.location) ?? '(no location)', 120)} not followed`, status, retryAfter));
            }
            return settle(failed(`HTTP ${status}${text ? `: ${excerpt(text)}` : ''}`, status, retryAfter));
          });
        },
      );
      const timer = setTimeout(() => req.destroy(new Error(`timed out after ${timeoutMs / 1000} s`)), timeoutMs);
      req.on('error', (err) => settle(failed(err instanceof RefusedAddress ? err.message : excerpt(err.message))));
      req.end(request.body);
    });
  }

  return { send };
}
export type WebhookSender = ReturnType<typeof createWebhookSender>;

const headerText = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);
