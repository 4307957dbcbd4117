import { MAX_EVENTS_PER_BATCH, TelemetryAccepted, TelemetryBatch } from '@corral/contracts';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { principalOf } from '../../http/auth.js';
import { actorOf } from '../../http/principal.js';
import { markNulFreeIfText } from '../../http/validation.js';
import { rateLimitError, rateLimitHeaders, type RateLimiter } from '../rate-limits/index.js';
import type { TelemetryService } from './telemetry-service.js';

/*
 * POST /v1/telemetry, stage by stage:
 *   1. authenticate       onRequest (http/auth.ts): API key with events:write
 *   2. rate limit         preValidation: the batch's events against the organization's
 *                         per-minute quota, all or nothing; RateLimit-* headers on every reply
 *   3. validate           the compiled TelemetryBatch schema, then timestamps and agents
 *   4. verify signature   Ed25519 over the raw body bytes kept by this plugin's JSON parser
 *   5. persist            one transaction: insert, skip known request_ids, fold into rollups
 *   6. fan out            after commit, to TelemetryListeners
 * A batch refused after stage 2 gives its quota back.
 */

interface Options {
  telemetryService: Pick<TelemetryService, 'ingest'>;
  rateLimiter: RateLimiter;
  signatureRequired: boolean;
}

const rawBodies = new WeakMap<FastifyRequest, Buffer>();
const taken = new WeakMap<FastifyRequest, number>();
const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
};

export const telemetryRoutes: FastifyPluginAsyncTypebox<Options> = async (app, { telemetryService, rateLimiter, signatureRequired }) => {
  // Scoped to this plugin: the signature covers the exact bytes, so keep them beside the parse.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const raw = body as Buffer;
    rawBodies.set(request, raw);
    try {
      const parsed: unknown = JSON.parse(raw.toString('utf8'));
      markNulFreeIfText(parsed, raw);
      done(null, parsed);
    } catch (err) {
      done(err as Error, undefined);
    }
  });

  async function limitStage(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const events = (request.body as { events?: unknown } | null)?.events;
    const count = Array.isArray(events) ? events.length : 0;
    // An empty or oversized batch is the validator's to refuse, with a 400 that says why.
    if (count === 0 || count > MAX_EVENTS_PER_BATCH) return;
    const decision = await rateLimiter.take(principalOf(request).orgId, count);
    void reply.headers(rateLimitHeaders(decision));
    if (!decision.allowed) throw rateLimitError(decision, count);
    taken.set(request, count);
  }

  // Runs before the reply leaves, so the quota a refused batch gives back is visible to the
  // client's next request, and the headers tell the state after the refund.
  app.addHook('onSend', async (request, reply) => {
    const orgId = request.principal?.orgId;
    if (orgId === undefined) return;
    const count = taken.get(request);
    if (count !== undefined && reply.statusCode >= 400) {
      taken.delete(request);
      await rateLimiter.refund(orgId, count);
      void reply.headers(rateLimitHeaders(await rateLimiter.peek(orgId)));
    } else if (!reply.hasHeader('ratelimit-limit')) {
      void reply.headers(rateLimitHeaders(await rateLimiter.peek(orgId)));
    }
  });

  app.post(
    '/v1/telemetry',
    {
      config: { auth: { key: { resource: 'events', access: 'write' } } },
      preValidation: limitStage,
      schema: {
        tags: ['telemetry'],
        summary: 'Ingest a batch of 1 to 1,000 telemetry events (all or nothing)',
        description: 'Optional headers: x-corral-signature (hex Ed25519 over the raw body), x-corral-public-key (hex, registers ' +
          "the agent's first key). Unsigned batches are refused on the ingest host. Re-sent request_ids are acknowledged and ignored.",
        body: TelemetryBatch,
        response: { 200: TelemetryAccepted },
      },
    },
    async (request) => {
      const p = principalOf(request);
      return telemetryService.ingest(p.orgId, actorOf(p), request.body.events, {
        raw: rawBodies.get(request) ?? Buffer.alloc(0),
        signature: header(request, 'x-corral-signature'),
        publicKey: header(request, 'x-corral-public-key'),
        signatureRequired,
      });
    },
  );
};
