import type { GenAiInfo } from '@corral/contracts';
import { createSseParser } from './sse.js';

/** What the SDK reads of a response at most: beyond it, usage is not reported. */
export const GENAI_JSON_BUDGET = 1 << 20;
/** For streams, only one event is held at a time, up to this size. */
export const GENAI_LINE_BUDGET = 256 << 10;

const genAiPath = /\/(chat\/completions|completions|responses|messages)$/;

/** The provider of a GenAI call, or null when the call is not one the SDK reads usage from. */
export function genAiProvider(host: string, path: string): 'openai' | 'anthropic' | null {
  const m = genAiPath.exec(path);
  if (!m) return null;
  if (host.includes('anthropic') || m[1] === 'messages') return 'anthropic';
  return 'openai';
}

const operationOf = (path: string) => (path.endsWith('/messages') || path.endsWith('/chat/completions') ? 'chat' : path.endsWith('/responses') ? 'responses' : 'text_completion');

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined);
const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 1_000_000_000 ? v : undefined);
const model = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 && v.length <= 200 ? v : undefined);

/** Folds one JSON object (a whole response, or one stream event) into what is known so far. */
export function foldUsage(into: GenAiInfo, value: unknown): void {
  const root = obj(value);
  if (!root) return;
  // Responses API stream events carry the response under `response`; Anthropic's message_start under `message`.
  const body = obj(root.response) ?? obj(root.message) ?? root;
  into.response_model = model(body.model) ?? into.response_model;
  const usage = obj(body.usage) ?? obj(root.usage);
  if (!usage) return;
  const input = count(usage.prompt_tokens) ?? count(usage.input_tokens);
  const output = count(usage.completion_tokens) ?? count(usage.output_tokens);
  const cached = count(obj(usage.prompt_tokens_details)?.cached_tokens) ?? count(obj(usage.input_tokens_details)?.cached_tokens) ?? count(usage.cache_read_input_tokens);
  const reasoning = count(obj(usage.completion_tokens_details)?.reasoning_tokens) ?? count(obj(usage.output_tokens_details)?.reasoning_tokens);
  if (input !== undefined) into.input_tokens = input;
  if (output !== undefined) into.output_tokens = output;
  if (cached !== undefined) into.cached_input_tokens = cached;
  if (reasoning !== undefined) into.reasoning_tokens = reasoning;
}

export function requestModel(body: unknown): string | undefined {
  if (typeof body !== 'string' || body.length > GENAI_JSON_BUDGET) return undefined;
  try {
    return model(obj(JSON.parse(body))?.model);
  } catch {
    return undefined;
  }
}

/**
 * Reads usage from a clone of the response: JSON up to the budget, or an event stream one event
 * at a time. The caller's own body is untouched; a read past the budget gives up (null).
 */
export async function readUsage(clone: Response, provider: 'openai' | 'anthropic', path: string, reqModel: string | undefined): Promise<GenAiInfo | null> {
  const info: GenAiInfo = { system: provider, operation: operationOf(path) };
  if (reqModel) info.request_model = reqModel;
  const type = clone.headers.get('content-type') ?? '';
  const body = clone.body;
  if (!body) return null;
  const decoder = new TextDecoder();
  try {
    if (type.includes('text/event-stream')) {
      const parser = createSseParser((e) => {
        if (e.data === '[DONE]') return;
        try {
          foldUsage(info, JSON.parse(e.data));
        } catch {
          // Not JSON: not an event that carries usage.
        }
      }, GENAI_LINE_BUDGET);
      for await (const chunk of body as AsyncIterable<Uint8Array>) parser.push(decoder.decode(chunk, { stream: true }));
    } else if (type.includes('json')) {
      let text = '';
      for await (const chunk of body as AsyncIterable<Uint8Array>) {
        text += decoder.decode(chunk, { stream: true });
        if (text.length > GENAI_JSON_BUDGET) return null;
      }
      foldUsage(info, JSON.parse(text));
    } else {
      return null;
    }
  } catch {
    return null;
  } finally {
    // Leaving the loop early (over budget) cancels the clone; this also frees an unread one.
    void body.cancel().catch(() => undefined);
  }
  return info.input_tokens !== undefined || info.output_tokens !== undefined || info.response_model !== undefined ? info : null;
}
