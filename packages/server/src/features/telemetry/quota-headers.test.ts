import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { UnavailableError } from '../../errors.js';
import { installErrorHandling } from '../../http/error-handler.js';
import type { RateLimitDecision } from '../rate-limits/index.js';
import { installQuotaHeaders } from './quota-headers.js';

const storeDown = () => new UnavailableError('The database is unavailable; retry shortly', 5);
const quotaOf: RateLimitDecision = { allowed: true, limit: 1000, remaining: 990, resetSeconds: 1, retryAfterSeconds: 0 };

/** An ingest-shaped route whose answer and quota reads are given; the caller is authenticated. */
async function appWith(answer: 'ok' | 'store down', quota: () => Promise<RateLimitDecision>) {
  const app = Fastify({ logger: false });
  installErrorHandling(app);
  app.decorateRequest('principal', undefined);
  app.addHook('onRequest', async (request) => {
    request.principal = { kind: 'api_key', orgId: 'org-1', keyId: 'key-1', scope: { kind: 'all' } };
  });
  let quotaReads = 0;
  installQuotaHeaders(app, { quota: () => { quotaReads++; return quota(); } });
  app.post('/ingest', async () => {
    if (answer === 'store down') throw storeDown();
    return { accepted: 1 };
  });
  await app.ready();
  return { app, quotaReads: () => quotaReads };
}

describe('RateLimit fields on ingest answers', () => {
  it('adds them to an answer that never reached the gate', async () => {
    const { app } = await appWith('ok', async () => quotaOf);
    const res = await app.inject({ method: 'POST', url: '/ingest' });
    expect(res.statusCode).toBe(200);
    expect(res.headers).toMatchObject({ 'ratelimit-limit': '1000', 'ratelimit-remaining': '990', 'ratelimit-policy': '1000;w=60' });
    await app.close();
  });

  it("keeps the contract's 503 body when the store is down, without reading the quota", async () => {
    const { app, quotaReads } = await appWith('store down', async () => { throw storeDown(); });
    const res = await app.inject({ method: 'POST', url: '/ingest' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.json()).toMatchObject({ error: { code: 'service_unavailable', message: 'The database is unavailable; retry shortly' } });
    expect(res.headers['ratelimit-limit']).toBeUndefined();
    expect(quotaReads()).toBe(0);
    await app.close();
  });

  it('sends the answer without them when the quota cannot be read', async () => {
    const { app, quotaReads } = await appWith('ok', async () => { throw storeDown(); });
    const res = await app.inject({ method: 'POST', url: '/ingest' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ accepted: 1 });
    expect(res.headers['ratelimit-limit']).toBeUndefined();
    expect(quotaReads()).toBe(1);
    await app.close();
  });
});
