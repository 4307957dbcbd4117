import { generateKeyPairSync, sign } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Corral } from '../src/index.js';
import { pae, POLICY_BUNDLE_TYPE } from '../src/envelope.js';
import { startCorral, startRelay, startTarget, until, type RunningCorral } from './helpers/corral-server.js';

type Envelope = { payloadType: string; payload: string; signatures: Array<{ keyid: string; sig: string }> };

/** Signature checks do not depend on the store: one store is enough here. */
describe('the SDK refuses bad policy envelopes and keeps the last good policy', () => {
  let corral: RunningCorral;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let relay: Awaited<ReturnType<typeof startRelay>>;
  let c: Corral;
  const warnings: string[] = [];

  beforeAll(async () => {
    [corral, target] = await Promise.all([startCorral('sqlite'), startTarget()]);
    relay = await startRelay(corral.api);
    relay.mode = 'inject';
  }, 120_000);
  afterAll(async () => {
    await c?.close();
    await relay?.close();
    await target?.close();
    await corral?.stop();
  });

  const state = async (agentId: string) => {
    const res = await fetch(`${corral.api}/v1/agents/${agentId}/control/state`, { headers: { 'x-api-key': corral.sdkKey } });
    return ((await res.json()) as { policy_envelope: Envelope }).policy_envelope;
  };
  const activate = (agentId: string, doc: unknown) => corral.call('POST', `/v1/agents/${agentId}/policies`, { policy: doc, activate: true });

  it('refuses tampered, replayed, foreign and future bundles, then applies a good one', async () => {
    const agentId = corral.agentId;
    await activate(agentId, { mode: 'enforce', default: 'allow', rules: [] });
    const first = await state(agentId);
    await activate(agentId, { mode: 'enforce', default: 'deny', rules: [] });
    const second = await state(agentId);
    const other = await corral.newAgent('other');
    await activate(other, { mode: 'enforce', default: 'allow', rules: [] });
    const foreign = await state(other);

    const serviceKeys = ((await (await fetch(`${corral.api}/v1/policy-keys`, { headers: { 'x-api-key': corral.sdkKey } })).json()) as { keys: Array<{ keyid: string; public_key: string }> }).keys;
    // A second pinned key, so a bundle from the future can carry a valid signature.
    const extra = generateKeyPairSync('ed25519');
    const extraHex = extra.publicKey.export({ type: 'spki', format: 'der' }).subarray(-32).toString('hex');
    c = new Corral({
      apiKey: corral.sdkKey, agent: agentId, baseUrl: relay.url, ingestUrl: corral.ingest, keyFile: null,
      policyKeys: [...serviceKeys, { keyid: 'test-extra', public_key: extraHex }],
      logger: { warn: (m) => warnings.push(m), error: (m) => warnings.push(m) },
    });
    await until(() => relay.connected(), 'the stream');
    relay.send('init', { kill_switch_active: false, active_policy_hash: null, policy_envelope: second });
    await c.ready();
    expect(c.status().policy).toMatchObject({ sequence: 2 });
    const f = c.wrap(fetch);
    await expect(f(`${target.url}/x`)).rejects.toMatchObject({ reason: 'default' });

    const refusedAfter = async (envelope: Envelope, why: string) => {
      const before = warnings.length;
      relay.send('policy_updated', { version: 1, sequence: 99, hash: `sha256:${'0'.repeat(64)}`, policy_envelope: envelope });
      await until(() => warnings.length > before, `the refusal (${why})`, 2000);
      expect(warnings.at(-1)).toContain(`(${why})`);
      expect(c.status().policy).toMatchObject({ sequence: 2 });
      await expect(f(`${target.url}/x`)).rejects.toMatchObject({ reason: 'default' });
    };

    await refusedAfter(first, 'replayed');
    const bundle = JSON.parse(Buffer.from(second.payload, 'base64').toString()) as Record<string, unknown>;
    const tampered = { ...bundle, sequence: 3, policy: { mode: 'enforce', default: 'allow', rules: [] } };
    await refusedAfter({ ...second, payload: Buffer.from(JSON.stringify(tampered)).toString('base64') }, 'signature');
    await refusedAfter(foreign, 'foreign_agent');
    const future = Buffer.from(JSON.stringify({ ...bundle, sequence: 4, issued_at: new Date(Date.now() + 3_600_000).toISOString() }));
    await refusedAfter({
      payloadType: POLICY_BUNDLE_TYPE, payload: future.toString('base64'),
      signatures: [{ keyid: 'test-extra', sig: sign(null, pae(POLICY_BUNDLE_TYPE, future), extra.privateKey).toString('base64') }],
    }, 'future');
    await refusedAfter({ ...second, signatures: [{ keyid: 'unknown', sig: second.signatures[0]?.sig ?? '' }] }, 'signature');

    // A genuine newer activation still applies: the stream was never poisoned.
    await activate(agentId, { mode: 'enforce', default: 'allow', rules: [] });
    relay.send('policy_updated', { version: 3, sequence: 3, hash: '', policy_envelope: await state(agentId) });
    await until(() => c.status().policy?.sequence === 3, 'the good bundle');
    expect((await f(`${target.url}/x`)).status).toBe(200);
  });

  it('with failMode closed blocks every call until a policy is known', async () => {
    const agentId = await corral.newAgent('closed');
    const closed = new Corral({ apiKey: corral.sdkKey, agent: agentId, baseUrl: corral.api, ingestUrl: corral.ingest, keyFile: null, failMode: 'closed', logger: { warn: () => undefined, error: () => undefined } });
    try {
      await expect(closed.wrap(fetch)(`${target.url}/y`)).rejects.toMatchObject({ reason: 'no_policy' });
      await closed.ready();
      await expect(closed.wrap(fetch)(`${target.url}/y`)).rejects.toMatchObject({ reason: 'no_policy' });
      await activate(agentId, { mode: 'enforce', default: 'allow', rules: [] });
      await until(() => closed.status().policy !== null, 'the policy');
      expect((await closed.wrap(fetch)(`${target.url}/y`)).status).toBe(200);
    } finally {
      await closed.close();
    }
  });
});
