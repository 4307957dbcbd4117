import type { GenAiInfo } from '@corral/contracts';

/*
 * GenAI attributes, every dialect the field has seen, one row per attribute key (docs/otlp.md
 * lists the same table). Rows of one field are in order of preference: the first key a span
 * carries wins, so the current semantic conventions beat older names and other vocabularies.
 *   gen_ai.*          OpenTelemetry GenAI semantic conventions (current, then older names)
 *   llm.*             OpenInference (Arize Phoenix) and OpenLLMetry
 *   ai.*              Vercel AI SDK
 */

export type GenAiField = Exclude<keyof GenAiInfo, 'cost_usd'> | 'total_tokens';

export interface DialectRow {
  readonly key: string;
  readonly field: GenAiField;
}

export const GEN_AI_DIALECTS: readonly DialectRow[] = [
  { key: 'gen_ai.provider.name', field: 'system' },
  { key: 'gen_ai.system', field: 'system' },
  { key: 'llm.system', field: 'system' },
  { key: 'llm.provider', field: 'system' },
  { key: 'ai.model.provider', field: 'system' },
  { key: 'gen_ai.request.model', field: 'request_model' },
  { key: 'llm.model_name', field: 'request_model' },
  { key: 'gen_ai.response.model', field: 'response_model' },
  { key: 'gen_ai.operation.name', field: 'operation' },
  { key: 'llm.request.type', field: 'operation' },
  { key: 'gen_ai.usage.input_tokens', field: 'input_tokens' },
  { key: 'gen_ai.usage.prompt_tokens', field: 'input_tokens' },
  { key: 'llm.token_count.prompt', field: 'input_tokens' },
  { key: 'ai.usage.promptTokens', field: 'input_tokens' },
  { key: 'gen_ai.usage.output_tokens', field: 'output_tokens' },
  { key: 'gen_ai.usage.completion_tokens', field: 'output_tokens' },
  { key: 'llm.token_count.completion', field: 'output_tokens' },
  { key: 'ai.usage.completionTokens', field: 'output_tokens' },
  { key: 'llm.token_count.total', field: 'total_tokens' },
  { key: 'gen_ai.usage.cache_read.input_tokens', field: 'cached_input_tokens' },
  { key: 'gen_ai.usage.cache_read_input_tokens', field: 'cached_input_tokens' },
  { key: 'cache_read_input_tokens', field: 'cached_input_tokens' },
  { key: 'llm.token_count.prompt_details.cache_read', field: 'cached_input_tokens' },
  { key: 'gen_ai.usage.reasoning.output_tokens', field: 'reasoning_tokens' },
  { key: 'gen_ai.usage.reasoning_tokens', field: 'reasoning_tokens' },
  { key: 'reasoning_tokens', field: 'reasoning_tokens' },
  { key: 'llm.token_count.completion_details.reasoning', field: 'reasoning_tokens' },
];

const TEXT_LIMITS = { system: 100, operation: 100, request_model: 200, response_model: 200 } as const;
const MAX_TOKENS = 1_000_000_000;
type TextField = keyof typeof TEXT_LIMITS;
const isText = (f: GenAiField): f is TextField => f in TEXT_LIMITS;

/** The attribute keys by field, in preference order: built once from the table. */
const byField = new Map<GenAiField, string[]>();
for (const row of GEN_AI_DIALECTS) byField.set(row.field, [...(byField.get(row.field) ?? []), row.key]);
export const GEN_AI_KEYS: ReadonlySet<string> = new Set(GEN_AI_DIALECTS.map((r) => r.key));

/** A key that marks a GenAI span even when the table does not know it: such a span is never dropped. */
export const isGenAiKey = (key: string): boolean => GEN_AI_KEYS.has(key) || key.startsWith('gen_ai.') || key.startsWith('llm.');

const toCount = (v: unknown): number | undefined => {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? Math.min(Math.floor(n), MAX_TOKENS) : undefined;
};
const toText = (v: unknown, max: number): string | undefined => {
  const s = typeof v === 'string' ? v.replaceAll('\u0000', '').trim() : typeof v === 'number' ? String(v) : undefined;
  return s === undefined || s.length === 0 ? undefined : s.slice(0, max);
};

/**
 * A span's attributes (already read into plain values) → GenAI info. Providers are lower-cased
 * (`OpenAI` and `openai` are one provider); a total without one of its parts gives the other part.
 */
export function extractGenAi(attrs: ReadonlyMap<string, unknown>): GenAiInfo {
  const info: GenAiInfo = {};
  let total: number | undefined;
  for (const [field, keys] of byField) {
    for (const key of keys) {
      if (!attrs.has(key)) continue;
      const raw = attrs.get(key);
      if (field === 'total_tokens') total = toCount(raw);
      else if (isText(field)) {
        const value = toText(raw, TEXT_LIMITS[field]);
        if (value !== undefined) info[field] = field === 'system' ? value.toLowerCase() : value;
      } else {
        const value = toCount(raw);
        if (value !== undefined) info[field] = value;
      }
      if (field === 'total_tokens' ? total !== undefined : info[field] !== undefined) break;
    }
  }
  if (total !== undefined) {
    if (info.input_tokens === undefined && info.output_tokens !== undefined) info.input_tokens = Math.max(0, total - info.output_tokens);
    else if (info.output_tokens === undefined && info.input_tokens !== undefined) info.output_tokens = Math.max(0, total - info.input_tokens);
  }
  return info;
}
