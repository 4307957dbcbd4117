/**
 * Added time per call of the SDK (decision with a 200-rule policy, path templating, event
 * capture; no network) against calling the same stub fetch directly, in the same run; and the
 * memory one queued event holds.
 *
 *   npm run bench -- sdk-overhead [--calls 200000] [--warmup-ms 5000]
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Corral } from '../packages/sdk/src/index.js';
import { flag, load, machine, percentile, table } from './_bench-kit.js';
import { startControlStub } from './_sdk-control-stub.js';

const calls = Number(flag('calls', '200000'));
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

// 200 rules that a call to api.example.com must walk past: 150 denies of other hosts (globs,
// methods, headers), 40 allows, 10 rate limits with matchers that do not select it.
const rules = [
  ...Array.from({ length: 150 }, (_, i) => ({ name: `deny-${i}`, deny: { method: ['DELETE' as const], url: `host${i}.example.org/v1/**`, headers: [{ name: 'x-tenant', exact: `t${i}` }] } })),
  ...Array.from({ length: 40 }, (_, i) => ({ name: `allow-${i}`, allow: { url: `api${i}.other.com/v2/*/items/**` } })),
  ...Array.from({ length: 10 }, (_, i) => ({ name: `limit-${i}`, limit: { calls_per_minute: 1000, per: 'endpoint' as const, match: { url: `rl${i}.example.net/**` } } })),
];
const policy = { mode: 'enforce', default: 'allow', rules };
const stub = await startControlStub(policy);
const quiet = { warn: () => undefined, error: () => undefined };
// Batches are built, serialized and signed as in an agent, then handed to a sink in place of
// the socket: the timed calls pay for all the SDK does except the network.
const ingestUrl = 'http://ingest.invalid';
let shipped = 0;
const sink = (async (input: string | URL | Request, init?: RequestInit) => {
  const href = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  if (href.startsWith(ingestUrl)) {
    shipped += typeof init?.body === 'string' ? init.body.length : 0;
    return new Response('{"accepted":0}', { status: 202 });
  }
  return fetch(input, init);
}) as typeof fetch;
const options = {
  apiKey: 'crl_test_bench', agent: stub.agentId, baseUrl: stub.url, ingestUrl, keyFile: null, fetch: sink, logger: quiet,
};
const corral = new Corral({ ...options, maxBatch: 100 });
await corral.ready();
for (let i = 0; i < 200 && corral.status().policy === null; i++) await new Promise((r) => setTimeout(r, 10));
if (corral.status().policy === null) throw new Error('policy not applied');

const response = new Response(null, { status: 200 });
const stubFetch = (async () => response) as unknown as typeof fetch;
const wrapped = corral.wrap(stubFetch);
const url = 'https://api.example.com/v1/customers/cus_NffrFeUfNV2Hib/charges/42';
const init = { method: 'POST', headers: { 'x-tenant': 'acme' }, body: '{"amount":100}' };

// Timed in rounds of 1,000 calls; between rounds, untimed, the SDK ships what it queued (as it
// does between an agent's calls, which wait on the network), and that shipping is timed apart.
let shippingNs = 0n;
let shippedEvents = 0;
async function measure(f: typeof fetch, n: number): Promise<number[]> {
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await f(url, init);
    out[i] = Number(process.hrtime.bigint() - t) / 1000;
    if (f === wrapped && i % 1000 === 999) {
      const queued = corral.status().queued;
      const s = process.hrtime.bigint();
      await corral.flush();
      shippingNs += process.hrtime.bigint() - s;
      shippedEvents += queued;
    }
  }
  return out;
}

// Warm-up until the JIT has settled (the first seconds of a process run slower code), then
// alternate rounds so both sides see the same machine.
const warmUntil = Date.now() + Number(flag('warmup-ms', '5000'));
while (Date.now() < warmUntil) {
  await measure(stubFetch, 10_000);
  await measure(wrapped, 10_000);
}
shippingNs = 0n;
shippedEvents = 0;
shipped = 0;
const direct: number[] = [];
const viaSdk: number[] = [];
for (let round = 0; round < 5; round++) {
  direct.push(...(await measure(stubFetch, calls / 5)));
  viaSdk.push(...(await measure(wrapped, calls / 5)));
}
const status = corral.status();
const q = (v: number[], p: number) => percentile(v, p).toFixed(2);
const added = (p: number) => (percentile(viaSdk, p) - percentile(direct, p)).toFixed(2);

// Memory per queued event: the heap after queuing N more events, over N, on an instance whose
// queue holds them all (its batches cannot go out: each send fails).
const holder = new Corral({ ...options, ingestUrl: 'http://127.0.0.1:9', fetch: undefined, maxBatch: 1000, flushIntervalMs: 3_600_000, maxQueue: 10_000_000 });
await holder.ready();
const holding = holder.wrap(stubFetch);
for (let i = 0; i < 1000; i++) await holding(url, init);
gc();
const before = process.memoryUsage().heapUsed;
const queuedBefore = holder.status().queued;
const extra = 100_000;
for (let i = 0; i < extra; i++) await holding(url, init);
gc();
const perEvent = (process.memoryUsage().heapUsed - before) / (holder.status().queued - queuedBefore);

console.log(`sdk-overhead: ${calls} calls each way, ${rules.length}-rule policy; ${machine()}; load ${load()}`);
console.log(table([
  { side: 'stub fetch directly', p50_us: q(direct, 0.5), p99_us: q(direct, 0.99) },
  { side: 'corral.wrap(stub fetch)', p50_us: q(viaSdk, 0.5), p99_us: q(viaSdk, 0.99) },
  { side: 'added by the SDK', p50_us: added(0.5), p99_us: added(0.99) },
]));
console.log(`shipping, off the call path (batches of 100 serialized, signed, handed to the sink): ${(Number(shippingNs) / 1000 / shippedEvents).toFixed(2)} µs per event, ${shippedEvents} events, ${(shipped / 1e6).toFixed(1)} MB of JSON; dropped ${status.dropped}`);
console.log(`memory per queued event: ${Math.round(perEvent)} bytes (${extra} events)`);
await corral.close().catch(() => undefined);
await holder.close().catch(() => undefined);
await stub.close();
process.exit(0);
