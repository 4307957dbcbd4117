import { describe, expect, it } from 'vitest';
import { extractGenAi, GEN_AI_DIALECTS, isGenAiKey } from './gen-ai-dialects.js';

const sampleOf = (field: string): string | number => {
  switch (field) {
    case 'system': return 'Anthropic';
    case 'operation': return 'chat';
    case 'request_model':
    case 'response_model': return 'claude-sonnet-4-20250514';
    default: return 1234;
  }
};

describe('GenAI attribute dialects', () => {
  it.each(GEN_AI_DIALECTS.filter((r) => r.field !== 'total_tokens'))('reads $key into $field', ({ key, field }) => {
    const value = sampleOf(field);
    const expected = field === 'system' ? 'anthropic' : value;
    expect(extractGenAi(new Map([[key, value]]))).toEqual({ [field]: expected });
    expect(isGenAiKey(key)).toBe(true);
  });

  it.each(GEN_AI_DIALECTS.filter((r) => r.field === 'total_tokens'))('reads $key as the total that completes input or output', ({ key }) => {
    expect(extractGenAi(new Map<string, unknown>([[key, 150], ['llm.token_count.prompt', 100]]))).toEqual({ input_tokens: 100, output_tokens: 50 });
    expect(extractGenAi(new Map<string, unknown>([[key, 150], ['llm.token_count.completion', 30]]))).toEqual({ input_tokens: 120, output_tokens: 30 });
  });

  it('prefers the current convention when a span carries several dialects', () => {
    const attrs = new Map<string, unknown>([
      ['gen_ai.system', 'old'], ['gen_ai.provider.name', 'openai'], ['gen_ai.usage.prompt_tokens', 1], ['gen_ai.usage.input_tokens', 2],
      ['llm.token_count.prompt', 3],
    ]);
    expect(extractGenAi(attrs)).toEqual({ system: 'openai', input_tokens: 2 });
  });

  it('reads counts sent as strings, drops negative or non-numeric ones and caps the huge', () => {
    expect(extractGenAi(new Map<string, unknown>([['gen_ai.usage.input_tokens', '77'], ['gen_ai.usage.output_tokens', -5], ['ai.usage.promptTokens', 'many']]))).toEqual({ input_tokens: 77 });
    expect(extractGenAi(new Map<string, unknown>([['gen_ai.usage.output_tokens', 1e15]]))).toEqual({ output_tokens: 1_000_000_000 });
  });

  it('cuts model names to the stored length and drops NUL characters', () => {
    const got = extractGenAi(new Map<string, unknown>([['gen_ai.request.model', `m\u0000${'x'.repeat(300)}`]]));
    expect(got.request_model).toHaveLength(200);
    expect(got.request_model?.includes('\u0000')).toBe(false);
  });

  it('marks unknown gen_ai.* and llm.* keys as GenAI, and leaves others alone', () => {
    expect(isGenAiKey('gen_ai.agent.name')).toBe(true);
    expect(isGenAiKey('llm.invocation_parameters')).toBe(true);
    expect(isGenAiKey('http.request.method')).toBe(false);
  });
});
