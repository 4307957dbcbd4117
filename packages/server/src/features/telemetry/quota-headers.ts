import type { FastifyInstance } from 'fastify';
import { rateLimitHeaders } from '../rate-limits/index.js';
import type { IngestService } from './ingest-service.js';

/**
 * Every answer of an ingest route to an authenticated caller carries the RateLimit-* fields,
 * refusals before the gate included: the gate sets them when it takes the quota, and this hook
 * reads the quota for the answers that never reached it.
 *
 * The fields inform; they never replace an answer. A 503 says the store is unavailable, so the
 * quota is not read for it; when the quota cannot be read for another answer, that answer goes
 * out without them: a throw here would make Fastify drop the contract's error body for its own.
 */
export function installQuotaHeaders(app: FastifyInstance, ingestService: Pick<IngestService, 'quota'>): void {
  app.addHook('onSend', async (request, reply) => {
    const orgId = request.principal?.orgId;
    if (orgId === undefined || reply.hasHeader('ratelimit-limit') || reply.statusCode === 503) return;
    try {
      void reply.headers(rateLimitHeaders(await ingestService.quota(orgId)));
    } catch (err) {
      request.log.warn({ err }, 'RateLimit fields left off: the quota could not be read');
    }
  });
}
