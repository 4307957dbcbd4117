import { ed25519 } from '@noble/curves/ed25519.js';
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../../../test/helpers/build-test-app.js';
import { testDialects } from '../../../test/helpers/test-databases.js';
import { createSigningKeyStore, createSigningService, generateSigningKeyPem, KEY_RETENTION_MS, parseSigningKey } from './index.js';

interface Envelope {
  payloadType: string;
  payload: string;
  signatures: Array<{ keyid: string; sig: string }>;
}
interface PolicyKey {
  keyid: string;
  algorithm: string;
  public_key: string;
}

/** DSSE v1 PAE written from the specification, independently of the code under test. */
function pae(type: string, body: Uint8Array): Uint8Array {
  const enc = new TextEncoder();
  const t = enc.encode(type);
  const parts = [enc.encode(`DSSEv1 ${t.length} `), t, enc.encode(` ${body.length} `), body];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const fromB64 = (s: string) => new Uint8Array(Buffer.from(s, 'base64'));
const fromHex = (s: string) => new Uint8Array(Buffer.from(s, 'hex'));

/** Verifies the way an SDK does: find the key by keyid, check the Ed25519 signature over the PAE. */
function verifies(envelope: Envelope, keys: PolicyKey[]): boolean {
  return envelope.signatures.some((s) => {
    const key = keys.find((k) => k.keyid === s.keyid && k.algorithm === 'ed25519');
    return key !== undefined && ed25519.verify(fromB64(s.sig), pae(envelope.payloadType, fromB64(envelope.payload)), fromHex(key.public_key));
  });
}

describe('signing keys', () => {
  it('reads a PKCS#8 PEM and the same key as a hex or base64 seed', () => {
    const pem = generateSigningKeyPem();
    const fromPem = parseSigningKey(pem);
    const seed = generateKeyPairSync('ed25519').privateKey;
    const seedBytes = seed.export({ type: 'pkcs8', format: 'der' }).subarray(-32);
    const hex = parseSigningKey(seedBytes.toString('hex'));
    const b64 = parseSigningKey(seedBytes.toString('base64'));
    const escaped = parseSigningKey(pem.replace(/\n/g, '\\n'));
    expect(fromPem.publicKeyHex).toMatch(/^[0-9a-f]{64}$/);
    expect(escaped.keyid).toBe(fromPem.keyid);
    expect(hex.publicKeyHex).toBe(b64.publicKeyHex);
    expect(hex.keyid).not.toBe(fromPem.keyid);
  });

  it('refuses material that is not an Ed25519 private key', () => {
    expect(() => parseSigningKey('not a key')).toThrow(/CORRAL_SIGNING_KEY/);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(() => parseSigningKey(rsa)).toThrow(/Ed25519/);
  });
});

describe.each(testDialects)('policy envelopes on %s', (dialect) => {
  let ctx: TestContext;
  let owner: { orgId: string; token: string };
  let apiKey: string;
  let agentId: string;
  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
    owner = await ctx.newOrg();
    apiKey = (await ctx.createKey(owner.token)).key;
    agentId = (await ctx.request({ method: 'POST', url: '/v1/agents', token: owner.token, payload: { name: 'Signed' } })).json().id;
    const policy = { mode: 'enforce', default: 'deny', rules: [{ name: 'reads', allow: { method: ['GET'] } }] };
    await ctx.request({ method: 'POST', url: `/v1/agents/${agentId}/policies`, token: owner.token, payload: { policy, activate: true } });
  });
  afterAll(() => ctx.close());

  const state = async () => (await ctx.request({ method: 'GET', url: `/v1/agents/${agentId}/control/state`, apiKey })).json<{ policy_envelope: Envelope }>();
  const keys = async () => (await ctx.request({ method: 'GET', url: '/v1/policy-keys', apiKey })).json<{ keys: PolicyKey[] }>().keys;

  it('signs a DSSE envelope that an independent verifier accepts', async () => {
    const { policy_envelope: envelope } = await state();
    expect(envelope.payloadType).toBe('application/vnd.corral.policy-bundle+json');
    const bundle = JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8'));
    expect(bundle).toMatchObject({ agent_id: agentId, version: 1, policy: { mode: 'enforce', default: 'deny' } });
    expect(bundle.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(Date.parse(bundle.issued_at)).toBeLessThanOrEqual(ctx.clock.now());
    expect(verifies(envelope, await keys())).toBe(true);
  });

  it('fails verification when the payload or its type is changed', async () => {
    const { policy_envelope: envelope } = await state();
    const listed = await keys();
    const bundle = JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8'));
    const forged = Buffer.from(JSON.stringify({ ...bundle, policy: { ...bundle.policy, default: 'allow' } })).toString('base64');
    expect(verifies({ ...envelope, payload: forged }, listed)).toBe(false);
    expect(verifies({ ...envelope, payloadType: 'application/vnd.corral.policy-bundle+jsonx' }, listed)).toBe(false);
    expect(verifies(envelope, listed)).toBe(true);
  });

  it('signs afresh on every request, with the same hash', async () => {
    const a = await state();
    ctx.clock.advance(1000);
    const b = await state();
    const bundleOf = (e: Envelope) => JSON.parse(Buffer.from(e.payload, 'base64').toString('utf8'));
    expect(bundleOf(b.policy_envelope).issued_at).not.toBe(bundleOf(a.policy_envelope).issued_at);
    expect(bundleOf(b.policy_envelope).hash).toBe(bundleOf(a.policy_envelope).hash);
  });

  it('lists keys to any JWT or API key holder, and to no one else', async () => {
    const viewer = await ctx.token({ orgId: owner.orgId, role: 'viewer' });
    expect((await ctx.request({ method: 'GET', url: '/v1/policy-keys', token: viewer })).statusCode).toBe(200);
    const restricted = await ctx.createKey(owner.token, { kind: 'restricted', resources: { events: 'write' } });
    expect((await ctx.request({ method: 'GET', url: '/v1/policy-keys', apiKey: restricted.key })).statusCode).toBe(200);
    expect((await ctx.request({ method: 'GET', url: '/v1/policy-keys' })).statusCode).toBe(401);
    const [first] = await keys();
    expect(first).toMatchObject({ algorithm: 'ed25519' });
    expect(first?.public_key).toMatch(/^[0-9a-f]{64}$/);
  });

  it('keeps a rotated-out key listed until its envelopes are past the retention', async () => {
    const oldEnvelope = (await state()).policy_envelope;
    // A process restarted with a new CORRAL_SIGNING_KEY, on the same store.
    const rotated = createSigningService({ signingKeyStore: createSigningKeyStore(ctx.testDb.db), clock: ctx.clock, key: parseSigningKey(generateSigningKeyPem()) });
    const afterRotation = await rotated.publicKeys();
    expect(afterRotation[0]?.keyid).toBe(rotated.keyid);
    expect(afterRotation.map((k) => k.keyid)).toContain(oldEnvelope.signatures[0]?.keyid);
    expect(verifies(oldEnvelope, afterRotation)).toBe(true);

    ctx.clock.advance(KEY_RETENTION_MS + 60_000);
    const later = await rotated.publicKeys();
    expect(later.map((k) => k.keyid)).toEqual([rotated.keyid]);
    expect(verifies(oldEnvelope, later)).toBe(false);
  });
});
