import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Corral, CorralBlockedError } from '../src/index.js';
import { testDialects } from '../../server/test/helpers/test-databases.js';
import { startCorral, startCuttableProxy, startRelay, startTarget, until, type RunningCorral } from './helpers/corral-server.js';

const quiet = { warn: () => undefined, error: () => undefined };
type Event = { request_id: string; method: string; url_host: string; url_path: string; status_code: number | null; policy_result: string; deny_reason: string | null; gen_ai: unknown };

describe.each(testDialects)('the SDK against a running server on %s', (dialect) => {
  let corral: RunningCorral;
  let target: Awaited<ReturnType<typeof startTarget>>;
  const clients: Corral[] = [];
  const sdk = (over: ConstructorParameters<typeof Corral>[0] = {}) => {
    const c = new Corral({ apiKey: corral.sdkKey, agent: corral.agentId, baseUrl: corral.api, ingestUrl: corral.ingest, keyFile: null, flushIntervalMs: 50, logger: quiet, ...over });
    clients.push(c);
    return c;
  };
  const events = async (agentId = corral.agentId) =>
    (await corral.call<{ data: Event[] }>('GET', `/v1/dashboard/events?agent_id=${agentId}&limit=100`)).json.data;
  const policy = async (doc: unknown, agentId = corral.agentId) =>
    (await corral.call<{ version: number }>('POST', `/v1/agents/${agentId}/policies`, { policy: doc, activate: true })).json;
  const killSwitch = (active: boolean, agentId = corral.agentId) => corral.call('POST', `/v1/agents/${agentId}/kill-switch`, { active, reason: 'test' });

  beforeAll(async () => {
    [corral, target] = await Promise.all([startCorral(dialect), startTarget()]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await target?.close();
    await corral?.stop();
  });

  it('lets allowed calls reach the target, blocks denied ones before they leave, and reports both with templates', async () => {
    const v = await policy({ mode: 'enforce', default: 'allow', rules: [{ name: 'no deletes', deny: { method: ['DELETE'], url: '127.0.0.1:*/v1/customers/**' } }] });
    const c = sdk();
    await c.ready();
    await until(() => c.status().policy?.version === v.version, 'the policy to apply');
    const f = c.wrap(fetch);
    const ok = await f(`${target.url}/v1/customers/cus_NffrFeUfNV2Hib/charges/42?secret=1`);
    expect(ok.status).toBe(200);
    const before = target.hits.length;
    const blocked = await f(`${target.url}/v1/customers/cus_NffrFeUfNV2Hib`, { method: 'DELETE' }).catch((e: unknown) => e);
    expect(blocked).toBeInstanceOf(CorralBlockedError);
    expect(blocked).toMatchObject({ reason: 'rule', rule: 'no deletes', requestId: expect.any(String) });
    expect(target.hits.length).toBe(before);
    await c.flush();
    const host = new URL(target.url).host;
    await until(async () => (await events()).length >= 2, 'both events');
    const all = await events();
    expect(all.find((e) => e.method === 'GET')).toMatchObject({ url_host: host, url_path: '/v1/customers/{id}/charges/{id}', status_code: 200, policy_result: 'allowed', deny_reason: null });
    expect(all.find((e) => e.method === 'DELETE')).toMatchObject({
      request_id: (blocked as CorralBlockedError).requestId, url_path: '/v1/customers/{id}', status_code: null, policy_result: 'denied', deny_reason: 'no deletes',
    });
    expect(JSON.stringify(all)).not.toContain('secret=1');
    expect(c.status()).toMatchObject({ connected: true, transport: 'sse', killSwitch: false, sent: 2, dropped: 0 });
  });

  it('in dry_run lets would-be-denied calls through with deny_reason', async () => {
    const agentId = await corral.newAgent('dry');
    await policy({ mode: 'dry_run', default: 'allow', rules: [{ name: 'would block', deny: { method: ['PUT'] } }] }, agentId);
    const c = sdk({ agent: agentId });
    await c.ready();
    await until(() => c.status().policy?.mode === 'dry_run', 'the policy');
    const before = target.hits.length;
    expect((await c.wrap(fetch)(`${target.url}/x`, { method: 'PUT', body: '{}' })).status).toBe(200);
    expect(target.hits.length).toBe(before + 1);
    await c.flush();
    await until(async () => (await events(agentId)).length === 1, 'the event');
    expect((await events(agentId))[0]).toMatchObject({ policy_result: 'allowed', deny_reason: 'would block', status_code: 200 });
  });

  it('blocks the next call within a second of the kill switch over SSE, resumes on release, and the instances list shows it', async () => {
    const agentId = await corral.newAgent('kill');
    const c = sdk({ agent: agentId });
    await c.ready();
    const f = c.wrap(fetch);
    expect((await f(`${target.url}/ping`)).status).toBe(200);
    const t0 = Date.now();
    await killSwitch(true, agentId);
    await until(() => c.status().killSwitch, 'the kill switch', 1000);
    const elapsed = Date.now() - t0;
    expect(elapsed).toBeLessThan(1000);
    await expect(f(`${target.url}/ping`)).rejects.toMatchObject({ reason: 'kill_switch', rule: null });
    const instances = async () => (await corral.call<{ data: Array<Record<string, unknown>> }>('GET', `/v1/agents/${agentId}/instances`)).json.data;
    await until(async () => (await instances())[0]?.kill_switch_active === true, 'the instance report');
    expect((await instances())[0]).toMatchObject({ instance_id: c.instanceId, transport: 'sse', connected: true, kill_switch_active: true, sdk_version: '0.1.0' });
    await killSwitch(false, agentId);
    await until(() => !c.status().killSwitch, 'the release', 1000);
    expect((await f(`${target.url}/ping`)).status).toBe(200);
    await c.flush();
    await until(async () => (await events(agentId)).some((e) => e.deny_reason === 'kill_switch'), 'the denied event');
  });

  it('lists an instance that closed right after it started, with the state it applied, as no longer connected', async () => {
    const agentId = await corral.newAgent('short-lived');
    await policy({ mode: 'enforce', default: 'allow', rules: [] }, agentId);
    const c = sdk({ agent: agentId });
    await c.ready();
    await until(() => c.status().policy?.sequence === 1, 'the policy');
    expect((await c.wrap(fetch)(`${target.url}/once`)).status).toBe(200);
    await c.close();
    // close() resolves after the closing report was answered: no waiting needed.
    const list = (await corral.call<{ data: Array<Record<string, unknown>> }>('GET', `/v1/agents/${agentId}/instances`)).json.data;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ instance_id: c.instanceId, connected: false, closed_at: expect.any(String), policy_version: 1, policy_sequence: 1, kill_switch_active: false });
    expect(await events(agentId)).toHaveLength(1);
  });

  it('applies a rollback activation and reports the applied version and sequence', async () => {
    const agentId = await corral.newAgent('rollback');
    await policy({ mode: 'enforce', default: 'allow', rules: [] }, agentId);
    const c = sdk({ agent: agentId });
    await c.ready();
    await until(() => c.status().policy?.sequence === 1, 'v1');
    await policy({ mode: 'enforce', default: 'deny', rules: [] }, agentId);
    await until(() => c.status().policy?.sequence === 2, 'v2');
    await expect(c.wrap(fetch)(`${target.url}/a`)).rejects.toMatchObject({ reason: 'default' });
    expect((await corral.call('POST', `/v1/agents/${agentId}/policies/1/activate`)).status).toBe(200);
    await until(() => c.status().policy?.sequence === 3, 'the rollback');
    expect(c.status().policy).toMatchObject({ version: 1, sequence: 3 });
    expect((await c.wrap(fetch)(`${target.url}/a`)).status).toBe(200);
    const list = async () => (await corral.call<{ data: Array<Record<string, unknown>> }>('GET', `/v1/agents/${agentId}/instances`)).json.data;
    await until(async () => (await list())[0]?.policy_sequence === 3, 'the instance report');
    expect((await list())[0]).toMatchObject({ policy_version: 1, policy_sequence: 3, policy_hash: c.status().policy?.hash });
  });

  it('delivers telemetry sent while the service is unreachable once it returns, exactly once', async () => {
    const agentId = await corral.newAgent('outage');
    const proxy = await startCuttableProxy(corral.ingest);
    try {
      const c = sdk({ agent: agentId, ingestUrl: proxy.url });
      await c.ready();
      proxy.cut();
      const f = c.wrap(fetch);
      for (let i = 0; i < 5; i++) expect((await f(`${target.url}/during-outage/${i}`)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 600));
      expect(c.status().sent).toBe(0);
      expect(c.status().queued).toBe(5);
      proxy.restore();
      await until(() => c.status().sent === 5, 'the retry after the outage', 20_000);
      await c.flush();
      const got = await events(agentId);
      expect(got).toHaveLength(5);
      expect(new Set(got.map((e) => e.request_id)).size).toBe(5);
      expect(got.every((e) => e.url_path === '/during-outage/{id}')).toBe(true);
    } finally {
      await proxy.close();
    }
  });

  it('falls back to polling while the stream is unavailable and blocks within the poll interval', async () => {
    const agentId = await corral.newAgent('poll');
    const relay = await startRelay(corral.api);
    try {
      const c = sdk({ agent: agentId, baseUrl: relay.url, pollIntervalMs: 300 });
      await c.ready();
      await until(() => c.status().transport === 'poll' && c.status().connected, 'polling');
      const f = c.wrap(fetch);
      expect((await f(`${target.url}/p`)).status).toBe(200);
      const t0 = Date.now();
      await killSwitch(true, agentId);
      await until(() => c.status().killSwitch, 'the kill switch by polling', 2000);
      expect(Date.now() - t0).toBeLessThan(300 + 400);
      await expect(f(`${target.url}/p`)).rejects.toMatchObject({ reason: 'kill_switch' });
      const list = async () => (await corral.call<{ data: Array<Record<string, unknown>> }>('GET', `/v1/agents/${agentId}/instances`)).json.data;
      await until(async () => (await list())[0]?.kill_switch_active === true, 'the instance report');
      expect((await list())[0]).toMatchObject({ transport: 'poll', connected: true });
      await killSwitch(false, agentId);
      await until(() => !c.status().killSwitch, 'the release by polling', 2000);
      expect((await f(`${target.url}/p`)).status).toBe(200);
    } finally {
      await relay.close();
    }
  });
});
