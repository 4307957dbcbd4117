import type { TelemetryEvent } from '@corral/contracts';
import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import type { TestContext } from './build-test-app.js';

/** An organization ready to send telemetry: owner token, all-scope key and one agent. */
export interface TelemetryOrg {
  orgId: string;
  token: string;
  apiKey: string;
  agentId: string;
}

export async function newTelemetryOrg(ctx: TestContext): Promise<TelemetryOrg> {
  const { orgId, token } = await ctx.newOrg();
  const { key } = await ctx.createKey(token);
  const agentId = await newAgent(ctx, token);
  return { orgId, token, apiKey: key, agentId };
}

export async function newAgent(ctx: TestContext, token: string, name = `agent ${randomBytes(3).toString('hex')}`): Promise<string> {
  const res = await ctx.request({ method: 'POST', url: '/v1/agents', token, payload: { name } });
  if (res.statusCode !== 200) throw new Error(`agent create failed: ${res.statusCode} ${res.body}`);
  return res.json<{ id: string }>().id;
}

let sequence = 0;
let clock: { now(): number } = { now: () => Date.now() };
/**
 * Events are stamped by the test context's clock, not the wall clock: dashboard windows end at
 * the context's "now", and a slow run must not push events into its future.
 */
export function stampEventsWith(c: { now(): number }): void {
  clock = c;
}

export function event(agentId: string, overrides: Partial<TelemetryEvent> & { at?: number } = {}): TelemetryEvent {
  const { at, ...rest } = overrides;
  return {
    agent_id: agentId,
    timestamp: new Date(at ?? clock.now()).toISOString(),
    request_id: `req-${randomBytes(8).toString('hex')}-${++sequence}`,
    method: 'GET',
    url_host: 'api.example.com',
    url_path: '/v1/items/{id}',
    status_code: 200,
    latency_ms: 25,
    policy_result: 'allowed',
    ...rest,
  };
}

export function postEvents(
  ctx: TestContext,
  apiKey: string,
  events: unknown[],
  opts: { host?: 'api' | 'ingest'; headers?: Record<string, string>; raw?: string } = {},
) {
  return ctx.request({
    method: 'POST',
    url: '/v1/telemetry',
    apiKey,
    host: opts.host ?? 'api',
    headers: { 'content-type': 'application/json', ...opts.headers },
    payload: opts.raw ?? JSON.stringify({ events }),
  });
}

/** An Ed25519 key pair as the SDK holds it: hex public key and a signer over raw bytes. */
export function newSigner(): { publicKeyHex: string; sign(body: string): string; privateKey: KeyObject } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const der = publicKey.export({ format: 'der', type: 'spki' });
  return {
    publicKeyHex: der.subarray(der.length - 32).toString('hex'),
    privateKey,
    sign: (body) => sign(null, Buffer.from(body), privateKey).toString('hex'),
  };
}

/** Nearest-rank quantile, the definition the dashboard approximates. */
export function exactQuantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1] ?? 0;
}

export const withinPercent = (got: number, exact: number, percent: number) => Math.abs(got - exact) <= (Math.abs(exact) * percent) / 100;
