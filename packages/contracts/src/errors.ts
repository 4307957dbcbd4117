import { Type, type Static } from '@sinclair/typebox';

/** Stable error codes; clients branch on these, never on messages. */
export const ErrorCode = {
  invalidJson: 'invalid_json',
  invalidValue: 'invalid_value',
  unauthorized: 'unauthorized',
  forbidden: 'forbidden',
  planLimitExceeded: 'plan_limit_exceeded',
  notFound: 'not_found',
  apiKeyNotRevoked: 'api_key_not_revoked',
  conflict: 'conflict',
  payloadTooLarge: 'payload_too_large',
  unsupportedMediaType: 'unsupported_media_type',
  rateLimited: 'rate_limited',
  internal: 'internal_error',
  unavailable: 'service_unavailable',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export const FieldError = Type.Object({ field: Type.String(), message: Type.String() });
export type FieldError = Static<typeof FieldError>;

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'Stable machine-readable code' }),
      message: Type.String(),
      details: Type.Optional(Type.Array(FieldError)),
      request_id: Type.Optional(Type.String()),
    }),
  },
);
export type ErrorBody = Static<typeof ErrorBody>;
