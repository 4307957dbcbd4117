import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generate, schemaFile } from '../scripts/generate.js';
import { apiErrorOf, collect, diffLines, readSse, unwrap } from '../src/index.js';

describe('the generated client', () => {
  // docs/openapi.json is checked against the served document by packages/server/test/openapi.test.ts;
  // this closes the chain: a route change that is not regenerated into the client fails here.
  it('is what docs/openapi.json generates (run `npm run -s openapi` after changing a route)', async () => {
    expect(readFileSync(schemaFile, 'utf8')).toBe(await generate());
  });
});

describe('errors', () => {
  it('carry the status, code, message and details of the API error body', () => {
    const response = new Response(null, { status: 400, headers: { 'retry-after': '7' } });
    const err = apiErrorOf(response, { error: { code: 'invalid_value', message: 'limit must be <= 100', details: [{ field: 'limit', message: 'too big' }] } });
    expect(err).toMatchObject({ status: 400, code: 'invalid_value', message: 'limit must be <= 100', details: [{ field: 'limit', message: 'too big' }], retryAfterSeconds: 7 });
  });

  it('fall back to the HTTP status when the body is not the API shape', () => {
    expect(() => unwrap({ error: 'Bad Gateway', response: new Response(null, { status: 502, statusText: 'Bad Gateway' }) })).toThrow(
      expect.objectContaining({ status: 502, code: 'http_502', message: '502 Bad Gateway' }),
    );
  });
});

describe('helpers', () => {
  it('collect follows next_cursor until has_more is false', async () => {
    const pages: Record<string, { data: number[]; has_more: boolean; next_cursor: string | null }> = {
      start: { data: [1, 2], has_more: true, next_cursor: 'b' },
      b: { data: [3], has_more: true, next_cursor: 'c' },
      c: { data: [4], has_more: false, next_cursor: null },
    };
    expect(await collect(async (cursor) => pages[cursor ?? 'start']!)).toEqual([1, 2, 3, 4]);
  });

  it('diffLines keeps common lines and marks removals and additions', () => {
    expect(diffLines('a\nb\nc', 'a\nc\nd')).toEqual([
      { op: ' ', text: 'a' },
      { op: '-', text: 'b' },
      { op: ' ', text: 'c' },
      { op: '+', text: 'd' },
    ]);
  });

  it('readSse splits events across chunk boundaries and skips heartbeats', async () => {
    const chunks = ['event: init\nid: 1\ndata: {"a":', '1}\n\n: heartbeat\n\nevent: kill_switch\r\ndata: {"active":true}\r\n\r\n'];
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const c of chunks) controller.enqueue(new TextEncoder().encode(c));
        controller.close();
      },
    });
    const messages = [];
    for await (const m of readSse(body)) messages.push(m);
    expect(messages).toEqual([
      { event: 'init', id: '1', data: '{"a":1}' },
      { event: 'kill_switch', id: '1', data: '{"active":true}' },
    ]);
  });
});
