import { Type, type Static } from '@sinclair/typebox';

/** ExportTraceServiceResponse in OTLP JSON: empty when every span was accepted (docs/otlp.md). */
export const OtlpExportResponse = Type.Object({
  partialSuccess: Type.Optional(Type.Object({
    rejectedSpans: Type.String({ pattern: '^\\d+$', description: 'Spans refused (an int64, as OTLP JSON writes it)' }),
    errorMessage: Type.String({ description: 'Why they were refused' }),
  })),
});
export type OtlpExportResponse = Static<typeof OtlpExportResponse>;

/** One entry of the operator's price table (CORRAL_PRICES_FILE, a JSON array of these). */
export const ModelPrice = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 200, description: 'Model name or pattern; `*` matches any characters, case-insensitive' }),
    provider: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only for this provider' })),
    input_per_million: Type.Number({ minimum: 0, description: 'USD per million input tokens' }),
    output_per_million: Type.Number({ minimum: 0, description: 'USD per million output tokens' }),
    cached_input_per_million: Type.Optional(Type.Number({ minimum: 0, description: 'USD per million cached input tokens (default: the input price)' })),
    effective_date: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'First day (UTC) the price applies' }),
  },
  { additionalProperties: false },
);
export type ModelPrice = Static<typeof ModelPrice>;
export const PriceTable = Type.Array(ModelPrice, { maxItems: 10_000 });
export type PriceTable = Static<typeof PriceTable>;

export const ModelUsageItem = Type.Object({
  provider: Type.String({ description: 'gen_ai system (provider), `unknown` when the call did not say' }),
  model: Type.String({ description: 'The model that answered, else the one asked for; `unknown` when neither was said' }),
  calls: Type.Integer(),
  input_tokens: Type.Integer(),
  output_tokens: Type.Integer(),
  cached_input_tokens: Type.Integer(),
  reasoning_tokens: Type.Integer(),
  cost_usd: Type.Union([Type.Number(), Type.Null()], { description: 'From the price table; null when a call of this model has no price' }),
});
export type ModelUsageItem = Static<typeof ModelUsageItem>;
