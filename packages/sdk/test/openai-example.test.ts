import { spawn } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCorral, startTarget, until, type RunningCorral } from './helpers/corral-server.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const exampleDir = path.resolve(here, '../../../examples/openai-agent');

/** A stand-in for the OpenAI API: a real HTTP server answering chat completions (plain and streamed). */
const standIn = (_req: IncomingMessage, res: ServerResponse, body: string) => {
  const request = JSON.parse(body || '{}') as { stream?: boolean; model?: string };
  if (request.stream) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const word of ['one', ' two', ' three']) res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini-2024', choices: [{ index: 0, delta: { content: word } }] })}\n\n`);
    res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini-2024', choices: [], usage: { prompt_tokens: 8, completion_tokens: 3, total_tokens: 11 } })}\n\n`);
    return void res.end('data: [DONE]\n\n');
  }
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
    id: 'c0', object: 'chat.completion', created: 1, model: 'gpt-4o-mini-2024',
    choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Hello!' } }],
    usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14, prompt_tokens_details: { cached_tokens: 4 } },
  }));
};

describe('examples/openai-agent', () => {
  let corral: RunningCorral;
  let api: Awaited<ReturnType<typeof startTarget>>;
  beforeAll(async () => {
    [corral, api] = await Promise.all([startCorral('sqlite'), startTarget(standIn)]);
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await corral?.stop();
  });

  it('runs the official openai client through corral.wrap(fetch): chat is reported with tokens, embeddings are blocked', async () => {
    await corral.call('POST', `/v1/agents/${corral.agentId}/policies`, {
      activate: true, policy: { mode: 'enforce', default: 'allow', rules: [{ name: 'no embeddings', deny: { url: '**/v1/embeddings' } }] },
    });
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', 'agent.ts'], {
      cwd: exampleDir,
      env: {
        PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '',
        CORRAL_URL: corral.api, CORRAL_INGEST_URL: corral.ingest, CORRAL_API_KEY: corral.sdkKey, CORRAL_AGENT: 'sdk-e2e',
        OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${api.url}/v1`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, stderr).toBe(0);
    const out = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}');
    expect(out).toMatchObject({ reply: 'Hello!', streamed: 'one two three', blocked: { reason: 'rule', rule: 'no embeddings' } });
    expect(api.hits.map((h) => h.url)).toEqual(['/v1/chat/completions', '/v1/chat/completions']);
    type Ev = { url_path: string; policy_result: string; deny_reason: string | null; gen_ai: Record<string, unknown> | null };
    const events = async () => (await corral.call<{ data: Ev[] }>('GET', `/v1/dashboard/events?agent_id=${corral.agentId}&limit=100`)).json.data;
    await until(async () => (await events()).length === 3, 'three events');
    const all = await events();
    const chats = all.filter((e) => e.url_path === '/v1/chat/completions');
    expect(chats.map((e) => e.gen_ai)).toEqual(expect.arrayContaining([
      expect.objectContaining({ system: 'openai', request_model: 'gpt-4o-mini', response_model: 'gpt-4o-mini-2024', input_tokens: 12, output_tokens: 2, cached_input_tokens: 4 }),
      expect.objectContaining({ system: 'openai', response_model: 'gpt-4o-mini-2024', input_tokens: 8, output_tokens: 3 }),
    ]));
    expect(all.find((e) => e.url_path === '/v1/embeddings')).toMatchObject({ policy_result: 'denied', deny_reason: 'no embeddings' });
  });

  it('sends what is queued when the event loop empties, for a script that never calls close()', async () => {
    const agentId = await corral.newAgent('exits-without-close');
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', path.join(here, 'fixtures/exit-without-close.ts')], {
      cwd: path.resolve(here, '..'),
      env: {
        PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '',
        CORRAL_URL: corral.api, CORRAL_INGEST_URL: corral.ingest, CORRAL_API_KEY: corral.sdkKey, CORRAL_AGENT: agentId, TARGET_URL: `${api.url}/v1/models`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      // A script the SDK held open must not outlive the test.
      timeout: 20_000, killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const started = Date.now();
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, stderr).toBe(0);
    // The event was still queued when the script's last line ran (the flush interval is an hour)...
    expect(JSON.parse(stdout.trim())).toEqual({ status: 200, queued: 1 });
    // ...the process ended on its own (an open control stream does not hold it)...
    expect(Date.now() - started).toBeLessThan(15_000);
    // ...and the event arrived before it did.
    const events = (await corral.call<{ data: Array<{ url_path: string; status_code: number }> }>('GET', `/v1/dashboard/events?agent_id=${agentId}`)).json.data;
    expect(events).toEqual([expect.objectContaining({ url_path: '/v1/models', status_code: 200 })]);
  });
});
