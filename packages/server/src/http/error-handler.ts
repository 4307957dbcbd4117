import { ErrorCode, type ErrorBody, type FieldError } from '@corral/contracts';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { describeSchemaErrors } from '../lib/validation-errors.js';

/** Fastify's own client errors, by code, mapped onto the contract's codes. */
const fastifyCodes: Record<string, { status: number; code: ErrorCode; message?: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: ErrorCode.invalidJson },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: ErrorCode.invalidJson, message: 'Body is empty but Content-Type is application/json' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: ErrorCode.payloadTooLarge, message: 'Request body is too large' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, code: ErrorCode.unsupportedMediaType, message: 'Unsupported Content-Type' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: ErrorCode.invalidValue },
  FST_ERR_CTP_INVALID_TYPE: { status: 400, code: ErrorCode.invalidValue },
  FST_ERR_BAD_URL: { status: 400, code: ErrorCode.invalidValue, message: 'Malformed URL' },
  FST_ERR_MAX_PARAM_LENGTH: { status: 400, code: ErrorCode.invalidValue, message: 'A path parameter is too long' },
};

const MAX_DETAILS = 20;

/**
 * One detail per field and problem, the field named as the caller spells it: `events.0.agent_id`
 * in a body, `querystring.limit` or `params.agent_id` elsewhere.
 */
function validationDetails(error: FastifyError): FieldError[] {
  const part = error.validationContext ?? 'body';
  return describeSchemaErrors(error.validation ?? []).slice(0, MAX_DETAILS).map(({ path, message }) => ({
    field: [part === 'body' ? '' : part, ...path].filter(Boolean).join('.') || part,
    message,
  }));
}

function toBody(status: number, code: string, message: string, requestId: string, details?: FieldError[]): ErrorBody {
  return { error: { code, message, ...(details && details.length > 0 ? { details } : {}), request_id: requestId } };
}

/**
 * Errors the router raises before any route is chosen (a malformed or over-long path), which
 * never reach the error handler; given to Fastify as `frameworkErrors`.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const known = (error.code ? fastifyCodes[error.code] : undefined) ?? { status: 500, code: ErrorCode.internal, message: 'Internal error' };
  void reply.status(known.status).send(toBody(known.status, known.code, known.message ?? error.message, request.id));
}

/** The single error handler: every failure leaves as the contract's error body. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof AppError) {
      if (error.headers) void reply.headers(error.headers);
      return reply.status(error.status).send(toBody(error.status, error.code, error.message, request.id, error.details));
    }
    if (error.validation) {
      const details = validationDetails(error);
      const message = details.map((d) => `${d.field} ${d.message}`).join('; ') || 'Invalid request';
      return reply.status(400).send(toBody(400, ErrorCode.invalidValue, message, request.id, details));
    }
    const known = error.code ? fastifyCodes[error.code] : undefined;
    if (known) {
      return reply.status(known.status).send(toBody(known.status, known.code, known.message ?? error.message, request.id));
    }
    if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON/i.test(error.message))) {
      return reply.status(400).send(toBody(400, ErrorCode.invalidJson, 'Body is not valid JSON', request.id));
    }
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status >= 500) {
      request.log.error({ err: error }, 'request failed');
      return reply.status(500).send(toBody(500, ErrorCode.internal, 'Internal error', request.id));
    }
    const code = status === 404 ? ErrorCode.notFound : status === 413 ? ErrorCode.payloadTooLarge : ErrorCode.invalidValue;
    return reply.status(status).send(toBody(status, code, error.message, request.id));
  });

  app.setNotFoundHandler((request, reply) => {
    void reply.status(404).send(toBody(404, ErrorCode.notFound, `Route ${request.method} ${request.url.split('?')[0]} not found`, request.id));
  });
}
