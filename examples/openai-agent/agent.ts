// An agent that talks to OpenAI with the official client, through Corral: every call is decided
// by the agent's policy (and the kill switch) before it leaves, and reported with its token use.
//
//   CORRAL_URL=http://127.0.0.1:8080 CORRAL_API_KEY=crl_live_… CORRAL_AGENT=my-agent \
//   OPENAI_API_KEY=sk-… npm start -w examples/openai-agent
import { Corral, CorralBlockedError } from '@corral/sdk';
import OpenAI from 'openai';

const corral = new Corral(); // CORRAL_API_KEY, CORRAL_AGENT, CORRAL_URL, CORRAL_INGEST_URL
await corral.ready();
const openai = new OpenAI({ fetch: corral.wrap(globalThis.fetch), maxRetries: 0 }); // OPENAI_API_KEY, OPENAI_BASE_URL

const out: Record<string, unknown> = {};
try {
  const reply = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] });
  out.reply = reply.choices[0]?.message.content;

  const stream = await openai.chat.completions.create({
    model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Count to three' }], stream: true, stream_options: { include_usage: true },
  });
  let streamed = '';
  for await (const chunk of stream) streamed += chunk.choices[0]?.delta.content ?? '';
  out.streamed = streamed;

  await openai.embeddings.create({ model: 'text-embedding-3-small', input: 'blocked by policy?' });
  out.embeddings = 'allowed';
} catch (err) {
  // The OpenAI client wraps what fetch throws; the Corral error is its cause.
  const blocked = err instanceof CorralBlockedError ? err : (err as { cause?: unknown }).cause;
  if (!(blocked instanceof CorralBlockedError)) throw err;
  out.blocked = { reason: blocked.reason, rule: blocked.rule };
} finally {
  await corral.close();
}
out.status = corral.status();
process.stdout.write(`${JSON.stringify(out)}\n`);
