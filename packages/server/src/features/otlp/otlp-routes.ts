import { ErrorCode, OtlpExportResponse } from '@corral/contracts';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { gunzip } from 'node:zlib';
import { AppError, ValidationError } from '../../errors.js';
import { principalOf } from '../../http/auth.js';
import { rateLimitHeaders } from '../rate-limits/index.js';
import { installQuotaHeaders, type IngestService } from '../telemetry/index.js';
import { decodeJson, decodeProtobuf, encodeResponse, responseJson } from './otlp-codec.js';
import type { OtlpService } from './otlp-service.js';

/*
 * POST /v1/traces, OTLP/HTTP on the ingest host: application/x-protobuf or application/json,
 * gzip or not. The parsers here only undo the transfer encoding; the handler decodes (a body
 * that does not decode is a 400) and the OTLP service takes it through the ingest gate. Other
 * content types are a 415, other encodings too. Errors leave as the contract's error body with
 * Retry-After on 429 and 503, which is what OTLP exporters read to back off.
 */

interface Options {
  otlpService: Pick<OtlpService, 'export'>;
  ingestService: Pick<IngestService, 'quota'>;
  bodyLimitBytes: number;
}

type OtlpBody = { format: 'protobuf'; bytes: Buffer } | { format: 'json'; value: unknown };

const PROTOBUF = 'application/x-protobuf';

/** The body's bytes with Content-Encoding undone; the decompressed size is held to the body limit too. */
function inflate(request: FastifyRequest, raw: Buffer, limit: number): Promise<Buffer> {
  const encoding = (request.headers['content-encoding'] ?? 'identity').toString().trim().toLowerCase();
  if (encoding === 'identity' || encoding === '') return Promise.resolve(raw);
  if (encoding !== 'gzip') {
    return Promise.reject(new AppError(415, ErrorCode.unsupportedMediaType, `Content-Encoding ${encoding} is not supported; send gzip or none`));
  }
  return new Promise((resolve, reject) => {
    gunzip(raw, { maxOutputLength: limit }, (err, out) => {
      if (!err) return resolve(out);
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
        return reject(new AppError(413, ErrorCode.payloadTooLarge, 'Request body is too large once decompressed'));
      }
      reject(new ValidationError('Body is not valid gzip'));
    });
  });
}

export const otlpRoutes: FastifyPluginAsyncTypebox<Options> = async (app, { otlpService, ingestService, bodyLimitBytes }) => {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(PROTOBUF, { parseAs: 'buffer' }, async (request: FastifyRequest, body: Buffer): Promise<OtlpBody> => (
    { format: 'protobuf', bytes: await inflate(request, body, bodyLimitBytes) }
  ));
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, async (request: FastifyRequest, body: Buffer): Promise<OtlpBody> => {
    const text = (await inflate(request, body, bodyLimitBytes)).toString('utf8');
    try {
      return { format: 'json', value: JSON.parse(text) as unknown };
    } catch {
      throw new AppError(400, ErrorCode.invalidJson, 'Body is not valid JSON');
    }
  });

  installQuotaHeaders(app, ingestService);

  app.post(
    '/v1/traces',
    {
      config: { auth: { key: { resource: 'events', access: 'write' } } },
      schema: {
        tags: ['telemetry'],
        summary: 'OTLP/HTTP trace export (protobuf or JSON, gzip or not)',
        description: 'An ExportTraceServiceRequest as application/x-protobuf or OTLP JSON. HTTP client spans and GenAI spans become ' +
          'events; agents are provisioned from the resource attribute service.name; other spans are accepted and skipped. ' +
          'Answers an ExportTraceServiceResponse in the request\'s format; partial_success counts refused spans and says why. ' +
          'See docs/otlp.md.',
        response: { 200: OtlpExportResponse },
      },
    },
    async (request, reply) => {
      const body = request.body as OtlpBody | undefined;
      if (body === undefined) throw new AppError(415, ErrorCode.unsupportedMediaType, `Send ${PROTOBUF} or application/json`);
      const decoded = body.format === 'protobuf' ? decodeProtobuf(body.bytes) : decodeJson(body.value);
      const outcome = await otlpService.export(principalOf(request), decoded, (quota) => void reply.headers(rateLimitHeaders(quota)));
      if (body.format === 'json') return responseJson(outcome.partial);
      // The schema describes the JSON answer; a Buffer is sent as it is, unserialized.
      const bytes = Buffer.from(encodeResponse(outcome.partial)) as unknown as OtlpExportResponse;
      return reply.type(PROTOBUF).send(bytes);
    },
  );
};
