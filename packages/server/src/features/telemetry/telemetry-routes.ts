import { TelemetryAccepted, TelemetryBatch } from '@corral/contracts';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { principalOf } from '../../http/auth.js';
import { markNulFreeIfText } from '../../http/validation.js';
import { rateLimitHeaders } from '../rate-limits/index.js';
import type { IngestService } from './ingest-service.js';
import { installQuotaHeaders } from './quota-headers.js';
import type { TelemetryService } from './telemetry-service.js';

/*
 * POST /v1/telemetry: the HTTP transport of the ingest gate (ingest-service.ts). The auth plugin
 * authenticates, the compiled TelemetryBatch schema validates, and the gate does the rest with
 * the telemetry service's checks as its prepare stage. Every answer to an authenticated caller
 * carries the RateLimit-* fields, refusals before the gate included.
 */

interface Options {
  ingestService: Pick<IngestService, 'ingest' | 'quota'>;
  telemetryService: Pick<TelemetryService, 'prepare'>;
  signatureRequired: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The exact body bytes, kept by the telemetry plugin's parser for the signature check. */
    rawBody: Buffer | undefined;
  }
}

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
};

export const telemetryRoutes: FastifyPluginAsyncTypebox<Options> = async (app, { ingestService, telemetryService, signatureRequired }) => {
  // Scoped to this plugin: the signature covers the exact bytes, so keep them beside the parse.
  app.decorateRequest('rawBody', undefined);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const raw = body as Buffer;
    request.rawBody = raw;
    try {
      const parsed: unknown = JSON.parse(raw.toString('utf8'));
      markNulFreeIfText(parsed, raw);
      done(null, parsed);
    } catch (err) {
      done(err as Error, undefined);
    }
  });

  installQuotaHeaders(app, ingestService);

  app.post(
    '/v1/telemetry',
    {
      config: { auth: { key: { resource: 'events', access: 'write' } } },
      schema: {
        tags: ['telemetry'],
        summary: 'Ingest a batch of 1 to 1,000 telemetry events (all or nothing)',
        description: 'Optional headers: x-corral-signature (hex Ed25519 over the raw body), x-corral-public-key (hex, registers ' +
          "the agent's first key). Unsigned batches are refused on the ingest host. Re-sent request_ids are acknowledged and ignored.",
        body: TelemetryBatch,
        response: { 200: TelemetryAccepted },
      },
    },
    async (request, reply) => {
      const { events } = request.body;
      const body = {
        raw: request.rawBody ?? Buffer.alloc(0),
        signature: header(request, 'x-corral-signature'),
        publicKey: header(request, 'x-corral-public-key'),
        signatureRequired,
      };
      const outcome = await ingestService.ingest({
        principal: principalOf(request),
        count: events.length,
        onQuota: (quota) => void reply.headers(rateLimitHeaders(quota)),
        prepare: (caller) => telemetryService.prepare(caller, events, body),
      });
      return { accepted: outcome.received };
    },
  );
};
