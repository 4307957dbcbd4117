import { describe, expect, it } from 'vitest';
import { foldUsage, genAiProvider, GENAI_JSON_BUDGET, readUsage } from '../src/genai.js';
import { createSseParser, type SseEvent } from '../src/sse.js';
import { retryAfterMs } from '../src/telemetry-queue.js';
import { templatePath } from '../src/template.js';

describe('path templates', () => {
  it('replaces numbers, UUIDs, long hex, ULIDs and prefixed ids, and keeps words', () => {
    expect(templatePath('/v1/customers/cus_NffrFeUfNV2Hib/charges/ch_3MmlLrLkdIwHu7ix0snN0B15')).toBe('/v1/customers/{id}/charges/{id}');
    expect(templatePath('/v1/messages/msg_01XFDUDYJgAACzvnptvVoYEL')).toBe('/v1/messages/{id}');
    expect(templatePath('/users/42/orders/7')).toBe('/users/{id}/orders/{id}');
    expect(templatePath('/items/0190a000-1234-7abc-8def-0123456789ab')).toBe('/items/{id}');
    expect(templatePath('/blobs/deadbeefdeadbeefdeadbeef')).toBe('/blobs/{id}');
    expect(templatePath('/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV')).toBe('/jobs/{id}');
    expect(templatePath('/v1/chat/completions')).toBe('/v1/chat/completions');
    expect(templatePath('/v1/list_items/payment_intents')).toBe('/v1/list_items/payment_intents');
    expect(templatePath('/')).toBe('/');
    expect(templatePath('/v2/')).toBe('/v2/');
  });
});

describe('event-stream parser', () => {
  it('parses events split anywhere, with CRLF, comments, multi-line data and retry', () => {
    const got: SseEvent[] = [];
    const p = createSseParser((e) => got.push(e));
    const text = 'retry: 2500\r\n: heartbeat\r\nevent: init\r\nid: 1\r\ndata: {"a":\r\ndata: 1}\r\n\r\ndata: plain\n\n';
    for (const ch of text) p.push(ch);
    expect(got).toEqual([{ event: 'init', data: '{"a":\n1}', id: '1' }, { event: 'message', data: 'plain', id: '1' }]);
    expect(p.retry()).toBe(2500);
  });

  it('refuses an endless line instead of growing without bound', () => {
    const p = createSseParser(() => undefined, 100);
    expect(() => p.push('data: ' + 'x'.repeat(200))).toThrow(/too long/);
  });
});

describe('GenAI usage', () => {
  const res = (body: string, type: string) => new Response(body, { headers: { 'content-type': type } });

  it('knows the providers by path', () => {
    expect(genAiProvider('api.openai.com', '/v1/chat/completions')).toBe('openai');
    expect(genAiProvider('api.openai.com', '/v1/responses')).toBe('openai');
    expect(genAiProvider('api.anthropic.com', '/v1/messages')).toBe('anthropic');
    expect(genAiProvider('api.openai.com', '/v1/models')).toBeNull();
  });

  it('reads OpenAI chat and responses JSON, and Anthropic messages JSON', async () => {
    expect(await readUsage(res(JSON.stringify({
      model: 'gpt-4o-2024', usage: { prompt_tokens: 10, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 3 }, completion_tokens_details: { reasoning_tokens: 2 } },
    }), 'application/json'), 'openai', '/v1/chat/completions', 'gpt-4o')).toEqual({
      system: 'openai', operation: 'chat', request_model: 'gpt-4o', response_model: 'gpt-4o-2024', input_tokens: 10, output_tokens: 5, cached_input_tokens: 3, reasoning_tokens: 2,
    });
    expect(await readUsage(res(JSON.stringify({ model: 'o3', usage: { input_tokens: 7, output_tokens: 9, output_tokens_details: { reasoning_tokens: 4 } } }), 'application/json'), 'openai', '/v1/responses', undefined))
      .toMatchObject({ operation: 'responses', input_tokens: 7, output_tokens: 9, reasoning_tokens: 4 });
    expect(await readUsage(res(JSON.stringify({ model: 'claude-x', usage: { input_tokens: 11, output_tokens: 12, cache_read_input_tokens: 6 } }), 'application/json'), 'anthropic', '/v1/messages', undefined))
      .toMatchObject({ system: 'anthropic', input_tokens: 11, output_tokens: 12, cached_input_tokens: 6 });
  });

  it('reads streamed usage from OpenAI and Anthropic event streams', async () => {
    const openai = ['{"model":"gpt-4o","choices":[{"delta":{"content":"hi"}}]}', '{"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}', '[DONE]']
      .map((d) => `data: ${d}\n\n`).join('');
    expect(await readUsage(res(openai, 'text/event-stream'), 'openai', '/v1/chat/completions', undefined)).toMatchObject({ response_model: 'gpt-4o', input_tokens: 3, output_tokens: 4 });
    const anthropic = [
      'event: message_start\ndata: {"type":"message_start","message":{"model":"claude-x","usage":{"input_tokens":20,"output_tokens":1}}}',
      'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"text":"hi"}}',
      'event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":15}}',
    ].map((e) => `${e}\n\n`).join('');
    expect(await readUsage(res(anthropic, 'text/event-stream'), 'anthropic', '/v1/messages', undefined)).toMatchObject({ response_model: 'claude-x', input_tokens: 20, output_tokens: 15 });
  });

  it('gives up past the memory budget instead of holding the body', async () => {
    const huge = JSON.stringify({ model: 'm', pad: 'x'.repeat(GENAI_JSON_BUDGET), usage: { prompt_tokens: 1 } });
    expect(await readUsage(res(huge, 'application/json'), 'openai', '/v1/chat/completions', undefined)).toBeNull();
    const info = {};
    foldUsage(info, { usage: { prompt_tokens: -1, completion_tokens: 1.5 } });
    expect(info).toEqual({});
  });
});

describe('Retry-After', () => {
  it('reads seconds and HTTP dates', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4000)).toBe(6000);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
  });
});
