import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/helpers/webhook-receiver.js';
import { createWebhookSender, type Resolve, WEBHOOK_TIMEOUT_MS } from './webhook-sender.js';
import { generateWebhookSecret } from './webhook-signature.js';

/** The sender alone: no store is involved, so it runs once, not per engine. */
describe('webhook sender', () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(() => receiver.stop());

  const secret = generateWebhookSecret();
  const request = (url: string) => ({ url, id: 'msg-1', body: '{"type":"alert.test"}', secrets: [secret], timestampSeconds: Math.floor(Date.now() / 1000) });
  /** A resolver standing in for DNS, counting its lookups. */
  const dns = (answers: Record<string, string[]>) => {
    const lookups: string[] = [];
    const resolve: Resolve = async (hostname) => {
      lookups.push(hostname);
      return (answers[hostname] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
    return { lookups, resolve };
  };

  it('signs per Standard Webhooks, verified by its own library', async () => {
    receiver.requests.length = 0;
    const outcome = await createWebhookSender({ allowPrivate: true }).send(request(receiver.url));
    expect(outcome).toEqual({ ok: true, httpStatus: 200, error: null });
    const [got] = receiver.requests;
    expect(new Webhook(secret).verify(got!.body, got!.headers as Record<string, string>)).toEqual({ type: 'alert.test' });
    expect(got?.headers).toMatchObject({ 'webhook-id': 'msg-1', 'webhook-signature': expect.stringMatching(/^v1,[A-Za-z0-9+/]{43}=$/) });
  });

  it('refuses private, loopback, link-local, unique-local, CGNAT and metadata addresses unless allowed', async () => {
    const sender = createWebhookSender({ allowPrivate: false });
    const port = receiver.port;
    for (const [host, kind] of [
      ['127.0.0.1', 'loopback'], ['[::1]', 'loopback'], ['[::ffff:127.0.0.1]', 'loopback'], ['10.1.2.3', 'private'], ['192.168.0.10', 'private'],
      ['172.20.0.1', 'private'], ['169.254.10.10', 'link-local'], ['[fe80::1]', 'link-local'], ['[fd12:3456::1]', 'unique local'],
      ['100.64.0.1', 'carrier-grade NAT'], ['169.254.169.254', 'cloud metadata'], ['0.0.0.0', 'unspecified'],
    ] as const) {
      const outcome = await sender.send(request(`http://${host}:${port}/hook`));
      expect(outcome.ok, host).toBe(false);
      expect(outcome.error, host).toMatch(new RegExp(`^refused: .*${kind}`));
    }
    // Metadata stays refused when private networks are allowed.
    expect((await createWebhookSender({ allowPrivate: true }).send(request('http://169.254.169.254/latest/meta-data'))).error).toMatch(/cloud metadata/);
  });

  it('checks every address a name resolves to, and connects to the address it checked (no second lookup to rebind)', async () => {
    receiver.requests.length = 0;
    const hostile = dns({ 'loopback.example.test': ['127.0.0.1'], 'mixed.example.test': ['93.184.216.34', '10.0.0.7'] });
    const guarded = createWebhookSender({ allowPrivate: false, resolve: hostile.resolve });
    expect((await guarded.send(request(`http://loopback.example.test:${receiver.port}/hook`))).error)
      .toMatch(/^refused: loopback\.example\.test resolves to 127\.0\.0\.1 is in the loopback range/);
    expect((await guarded.send(request(`http://mixed.example.test:${receiver.port}/hook`))).error).toMatch(/10\.0\.0\.7 is in the private range/);
    expect(receiver.requests).toHaveLength(0);

    // The name exists only in this resolver: the request arriving shows the socket used the
    // guard's answer, and the one lookup shows there was no other answer to be rebound to.
    const allowed = dns({ 'receiver.example.test': ['127.0.0.1'] });
    const outcome = await createWebhookSender({ allowPrivate: true, resolve: allowed.resolve }).send(request(`http://receiver.example.test:${receiver.port}/hook`));
    expect(outcome.ok).toBe(true);
    expect(allowed.lookups).toEqual(['receiver.example.test']);
    expect(receiver.requests.map((r) => r.headers.host)).toEqual([`receiver.example.test:${receiver.port}`]);
  });

  it('does not follow redirects', async () => {
    const target = await startWebhookReceiver('/elsewhere');
    try {
      receiver.answer = () => ({ status: 307, headers: { location: target.url } });
      const outcome = await createWebhookSender({ allowPrivate: true }).send(request(receiver.url));
      expect(outcome).toMatchObject({ ok: false, httpStatus: 307, error: `HTTP 307: redirect to ${target.url} not followed` });
      expect(target.requests).toHaveLength(0);
    } finally {
      receiver.answer = () => ({ status: 200 });
      await target.stop();
    }
  });

  it('gives up on a receiver that takes longer than 10 seconds', { timeout: 20_000 }, async () => {
    expect(WEBHOOK_TIMEOUT_MS).toBe(10_000);
    receiver.answer = () => ({ status: 200, delayMs: 15_000 });
    try {
      const began = Date.now();
      const outcome = await createWebhookSender({ allowPrivate: true }).send(request(receiver.url));
      const took = Date.now() - began;
      expect(outcome).toMatchObject({ ok: false, httpStatus: null, error: 'timed out after 10 s' });
      expect(took).toBeGreaterThanOrEqual(10_000);
      expect(took).toBeLessThan(11_500);
    } finally {
      receiver.answer = () => ({ status: 200 });
    }
  });

  it('reads Retry-After in seconds or as a date', async () => {
    const sender = createWebhookSender({ allowPrivate: true, now: () => Date.parse('2026-01-01T00:00:00Z') });
    receiver.answer = () => ({ status: 429, headers: { 'retry-after': '90' } });
    expect((await sender.send(request(receiver.url))).retryAfterMs).toBe(90_000);
    receiver.answer = () => ({ status: 503, headers: { 'retry-after': 'Thu, 01 Jan 2026 00:10:00 GMT' } });
    expect((await sender.send(request(receiver.url)))).toMatchObject({ httpStatus: 503, retryAfterMs: 600_000 });
    receiver.answer = () => ({ status: 200 });
  });
});
