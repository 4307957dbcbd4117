import { Type, type Static } from '@sinclair/typebox';
import { StringEnum, Timestamp, Uuid } from './common.js';

export const PolicyResult = StringEnum(['allowed', 'denied', 'error']);
export type PolicyResult = Static<typeof PolicyResult>;

export const MAX_EVENTS_PER_BATCH = 1000;

const TraceId = Type.String({ pattern: '^[0-9a-fA-F]{32}$', description: 'W3C trace id, 32 hex characters' });
const SpanId = Type.String({ pattern: '^[0-9a-fA-F]{16}$', description: 'W3C span id, 16 hex characters' });

const TokenCount = Type.Integer({ minimum: 0, maximum: 1_000_000_000 });
const ModelName = Type.String({ minLength: 1, maxLength: 200 });

/**
 * GenAI usage of one call (contract section 8): from OTLP spans with GenAI attributes, or sent
 * by an SDK that read the provider's response. Every field is optional; `system` is the provider.
 */
export const GenAiInfo = Type.Object(
  {
    system: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'The provider: openai, anthropic, …' })),
    operation: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'chat, text_completion, embeddings, …' })),
    request_model: Type.Optional(ModelName),
    response_model: Type.Optional(ModelName),
    input_tokens: Type.Optional(TokenCount),
    output_tokens: Type.Optional(TokenCount),
    cached_input_tokens: Type.Optional(TokenCount),
    reasoning_tokens: Type.Optional(TokenCount),
    cost_usd: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000, description: 'What the call cost, where the sender knows it' })),
  },
  { additionalProperties: false },
);
export type GenAiInfo = Static<typeof GenAiInfo>;

/** One outbound call as the SDK reports it (interface section 2.4). */
export const TelemetryEvent = Type.Object(
  {
    agent_id: Uuid,
    timestamp: Timestamp,
    request_id: Type.String({ minLength: 1, maxLength: 200, description: 'Unique per organization; a re-sent event is ignored' }),
    method: Type.String({ pattern: '^[A-Za-z]{1,16}$', description: 'HTTP method' }),
    url_host: Type.String({ minLength: 1, maxLength: 260 }),
    url_path: Type.String({ minLength: 1, maxLength: 2048, description: 'Path template, identifiers replaced by {id}' }),
    status_code: Type.Union([Type.Integer({ minimum: 0, maximum: 599 }), Type.Null()], {
      description: 'HTTP status; stored as null for denied calls, which never reached the API',
    }),
    latency_ms: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 86_400_000 }), Type.Null()])),
    policy_result: PolicyResult,
    deny_reason: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()])),
    trace_id: Type.Optional(Type.Union([TraceId, Type.Null()])),
    span_id: Type.Optional(Type.Union([SpanId, Type.Null()])),
    gen_ai: Type.Optional(Type.Union([GenAiInfo, Type.Null()])),
  },
  { additionalProperties: false },
);
export type TelemetryEvent = Static<typeof TelemetryEvent>;

export const TelemetryBatch = Type.Object(
  {
    events: Type.Array(TelemetryEvent, { minItems: 1, maxItems: MAX_EVENTS_PER_BATCH }),
    sdk_version: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);
export type TelemetryBatch = Static<typeof TelemetryBatch>;

export const TelemetryAccepted = Type.Object({
  accepted: Type.Integer({ description: 'Events acknowledged, re-sent duplicates included' }),
});
export type TelemetryAccepted = Static<typeof TelemetryAccepted>;

