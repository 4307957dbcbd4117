/**
 * Added time per call of the SDK (decision with a 200-rule policy, path templating, event
 * capture; no network) against calling the same stub fetch directly, in the same run; and the
 * memory one queued event holds.
 *
 *   npm run bench -- sdk-overhead [--calls 100000]
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Corral } from '../packages/sdk/src/index.js';
import { flag, load, machine, percentile, table } from './_bench-kit.js';
import { startControlStub } from './_sdk-control-stub.js';

const calls = Number(flag('calls', '100000'));
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
const corral = new Corral({
  apiKey: 'crl_test_bench', agent: stub.agentId, baseUrl: stub.url, ingestUrl: 'http://127.0.0.1:9', keyFile: null,
  flushIntervalMs: 3_600_000, maxBatch: 1000, maxQueue: 10_000_000, logger: quiet,
});
await corral.ready();
for (let i = 0; i < 200 && corral.status().policy === null; i++) await new Promise((r) => setTimeout(r, 10));
if (corral.status().policy === null) throw new Error('policy not applied');

const response = new Response(null, { status: 200 });
const stubFetch = (async () => response) as unknown as typeof fetch;
const wrapped = corral.wrap(stubFetch);
const url = 'https://api.example.com/v1/customers/cus_NffrFeUfNV2Hib/charges/42';
const init = { method: 'POST', headers: { 'x-tenant': 'acme' }, body: '{"amount":100}' };

async function measure(f: typeof fetch, n: number): Promise<number[]> {
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await f(url, init);
    out[i] = Number(process.hrtime.bigint() - t) / 1000;
  }
  return out;
}

// Warm-up, then alternate rounds so both sides see the same machine.
await measure(stubFetch, 20_000);
await measure(wrapped, 20_000);
const direct: number[] = [];
const viaSdk: number[] = [];
for (let round = 0; round < 5; round++) {
  direct.push(...(await measure(stubFetch, calls / 5)));
  viaSdk.push(...(await measure(wrapped, calls / 5)));
}
const q = (v: number[], p: number) => percentile(v, p).toFixed(2);
const added = (p: number) => (percentile(viaSdk, p) - percentile(direct, p)).toFixed(2);

// Memory per queued event: the heap after queuing N more events, over N.
await corral.flush().catch(() => undefined);
gc();
const before = process.memoryUsage().heapUsed;
const queuedBefore = corral.status().queued;
const extra = 100_000;
for (let i = 0; i < extra; i++) await wrapped(url, init);
gc();
const perEvent = (process.memoryUsage().heapUsed - before) / (corral.status().queued - queuedBefore);

console.log(`sdk-overhead: ${calls} calls each way, ${rules.length}-rule policy; ${machine()}; load ${load()}`);
console.log(table([
  { side: 'stub fetch directly', p50_us: q(direct, 0.5), p99_us: q(direct, 0.99) },
  { side: 'corral.wrap(stub fetch)', p50_us: q(viaSdk, 0.5), p99_us: q(viaSdk, 0.99) },
  { side: 'added by the SDK', p50_us: added(0.5), p99_us: added(0.99) },
]));
console.log(`memory per queued event: ${Math.round(perEvent)} bytes (${extra} events)`);
await corral.close().catch(() => undefined);
await stub.close();
process.exit(0);
