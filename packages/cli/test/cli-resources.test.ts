import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../../server/test/helpers/server-process.js';
import { buildCli, createStore, runBuiltCli, spawnBuiltCli, type TestStore } from './helpers/cli-process.js';

const pgUrl = inject('pgUrl');
/**
 * These commands speak HTTP only, so one store is enough: PostgreSQL when the run has it (as CI
 * does), else SQLite. The server's behaviour on both engines is the server tests' job, and
 * cli-store.test.ts runs the operator commands, which do touch the store, on both.
 */
const dialects = pgUrl ? (['postgres'] as const) : (['sqlite'] as const);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON printed by the CLI, judged by expect()
type Json = any;

beforeAll(() => buildCli(), 120_000);

/** An address nothing listens on: a port the system handed out, then closed. */
async function closedPort(): Promise<string> {
  const listener = createServer();
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const { port } = listener.address() as AddressInfo;
  await new Promise((resolve) => listener.close(resolve));
  return `http://127.0.0.1:${port}`;
}

describe.each(dialects)('the API commands of the built CLI against a running server on %s', { timeout: 150_000 }, (dialect) => {
  let store: TestStore;
  let server: ServerProcess;
  let configHome: string;
  let env: Record<string, string>;
  let ownerToken: string;
  const orgId = crypto.randomUUID();
  /** One agent and an all-scope key, made through the API, for the tests that are not about them. */
  const shared = { agentId: '', apiKey: '' };

  // Each test works on its own resources; all but the login test use CORRAL_URL and CORRAL_TOKEN.
  beforeAll(async () => {
    store = await createStore(dialect, pgUrl);
    server = await startServerProcess(store.env);
    configHome = mkdtempSync(path.join(tmpdir(), 'corral-cli-config-'));
    const minted = await runBuiltCli(['token', '--org', orgId, '--role', 'owner', '--sub', 'cli-owner'], store.env);
    ownerToken = minted.stdout.trim();
    // The server's own settings too: `login --mint` signs with the server's secret.
    env = { ...store.env, XDG_CONFIG_HOME: path.join(configHome, 'unused'), CORRAL_URL: server.api, CORRAL_TOKEN: ownerToken };
    shared.agentId = (await api('POST', '/v1/agents', { token: ownerToken, body: { name: 'Shared Bot' } })).body.id as string;
    shared.apiKey = (await api('POST', '/v1/keys', { token: ownerToken, body: { name: 'sender', scope: { kind: 'all' } } })).body.key as string;
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await store?.close();
    rmSync(configHome, { recursive: true, force: true });
  });

  const corral = (args: string[], extra: Record<string, string> = {}, input?: string) => runBuiltCli(args, { ...env, ...extra }, input);
  async function json(args: string[], extra: Record<string, string> = {}): Promise<Json> {
    const res = await corral([...args, '--json'], extra);
    expect(res.code, res.stderr).toBe(0);
    return JSON.parse(res.stdout);
  }
  async function api(method: string, url: string, init: { token?: string; apiKey?: string; body?: unknown } = {}) {
    const res = await fetch(`${server.api}${url}`, {
      method,
      headers: {
        ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
        ...(init.apiKey ? { 'x-api-key': init.apiKey } : {}),
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
    return { status: res.status, body: (await res.json()) as Json };
  }
  const profileToken = (): string => (JSON.parse(readFileSync(path.join(configHome, 'corral/config.json'), 'utf8'))).profiles.default.token as string;

  it('login --mint or a pasted token saves profiles (0600); --profile, CORRAL_PROFILE and CORRAL_TOKEN choose; whoami asks the server', async () => {
    // Its own config folder and no CORRAL_URL/CORRAL_TOKEN: only the profiles speak here.
    const corral = (args: string[], extra: Record<string, string> = {}, input?: string) =>
      runBuiltCli(args, { ...env, XDG_CONFIG_HOME: configHome, CORRAL_URL: '', CORRAL_TOKEN: '', ...extra }, input);
    const json = async (args: string[], extra: Record<string, string> = {}): Promise<Json> => {
      const res = await corral([...args, '--json'], extra);
      expect(res.code, res.stderr).toBe(0);
      return JSON.parse(res.stdout);
    };
    const login = await corral(['login', '--url', server.api, '--mint', '--org', orgId, '--role', 'owner']);
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toContain(`Logged in to ${server.api}`);
    const file = path.join(configHome, 'corral/config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    const who = await json(['whoami']);
    expect(who).toMatchObject({ org_id: orgId, role: 'owner', url: server.api, profile: 'default' });
    expect((await corral(['whoami'])).stdout).toMatch(/role:\s+owner/);

    const minted = await corral(['token', '--org', orgId, '--role', 'viewer', '--sub', 'viewer-user']);
    expect(minted.code, minted.stderr).toBe(0);
    const pasted = await corral(['login', '--url', server.api, '--profile', 'ro'], {}, `${minted.stdout.trim()}\n`);
    expect(pasted.code, pasted.stderr).toBe(0);
    expect(await json(['whoami', '--profile', 'ro'])).toMatchObject({ role: 'viewer', subject: 'viewer-user', profile: 'ro' });
    expect(await json(['whoami'], { CORRAL_PROFILE: 'ro' })).toMatchObject({ role: 'viewer' });
    // The last login is the default now; the environment overrides it.
    expect(await json(['whoami'])).toMatchObject({ role: 'viewer' });
    const owner = await corral(['login', '--url', server.api, '--profile', 'default', '--token', profileToken()]);
    expect(owner.code, owner.stderr).toBe(0);
    expect(await json(['whoami'], { CORRAL_TOKEN: minted.stdout.trim() })).toMatchObject({ role: 'viewer' });

    const bad = await corral(['login', '--url', server.api, '--profile', 'bad', '--token', 'not-a-jwt', '--json']);
    expect(bad.code).toBe(3);
    expect(JSON.parse(bad.stderr)).toMatchObject({ error: { code: 'unauthorized' }, status: 401 });
    const unknown = await corral(['whoami', '--profile', 'nobody']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no profile "nobody"');
    const down = await corral(['agents', 'list'], { CORRAL_URL: await closedPort() });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/cannot reach the API: ECONNREFUSED/);
    const viewerWrite = await corral(['agents', 'create', '--name', 'x', '--profile', 'ro']);
    expect(viewerWrite.code).toBe(3);
    expect(viewerWrite.stderr).toMatch(/\(403 forbidden\)/);
  });

  it('agents: create, list, get, update, kill with a reason, resume, delete', async () => {
    const created = await json(['agents', 'create', '--name', 'Billing Bot']);
    expect(created).toMatchObject({ name: 'Billing Bot', org_id: orgId, kill_switch_active: false });
    const state = { agentId: created.id as string };
    const spare = await json(['agents', 'create', '--name', 'Spare']);

    const table = await corral(['agents', 'list']);
    expect(table.stdout).toMatch(/^ID\s+NAME\s+STATUS\s+KILL SWITCH/);
    expect(table.stdout).toContain('Billing Bot');
    const page = await json(['agents', 'list', '--limit', '1']);
    expect(page.data).toHaveLength(1);
    expect(page.has_more).toBe(true);
    const next = await json(['agents', 'list', '--limit', '1', '--cursor', page.next_cursor as string]);
    expect(next.data[0].id).not.toBe(page.data[0].id);

    expect(await json(['agents', 'get', state.agentId])).toMatchObject({ id: state.agentId, name: 'Billing Bot' });
    expect(await json(['agents', 'update', state.agentId, '--name', 'Billing'])).toMatchObject({ name: 'Billing' });
    expect(await json(['agents', 'update', state.agentId, '--status', 'inactive'])).toMatchObject({ status: 'inactive' });

    const killed = await corral(['agents', 'kill', state.agentId, '--reason', 'runaway spend']);
    expect(killed.code, killed.stderr).toBe(0);
    expect(killed.stdout).toContain('ENGAGED');
    expect((await api('GET', `/v1/agents/${state.agentId}`, { token: ownerToken })).body.kill_switch_active).toBe(true);
    expect(await json(['agents', 'resume', state.agentId])).toMatchObject({ kill_switch_active: false });
    const audit = await json(['audit', 'list', '--action', 'agent.kill_switch']);
    expect(audit.data).toEqual(expect.arrayContaining([expect.objectContaining({ target_id: state.agentId, reason: 'runaway spend' })]));
    expect((await corral(['audit', 'list'])).stdout).toMatch(/agent\.kill_switch/);

    expect(await json(['agents', 'delete', spare.id as string])).toEqual({ success: true });
    const gone = await corral(['agents', 'get', spare.id as string, '--json']);
    expect(gone.code).toBe(4);
    expect(JSON.parse(gone.stderr)).toMatchObject({ error: { code: 'not_found' }, status: 404 });
    const invalid = await corral(['agents', 'get', 'not-a-uuid']);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/\(400 invalid_value\)/);
    const noReason = await corral(['agents', 'kill', state.agentId]);
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toMatch(/--reason/);
  });

  it('agents instances: the SDK instances as they reported, with the kill switch each applied', async () => {
    const agentId = (await json(['agents', 'create', '--name', 'Fleet Bot'])).id as string;
    expect((await corral(['agents', 'instances', agentId])).stdout).toContain('(none)');
    // Three SDK processes report what they applied, as the SDK does (POST with an events:write key).
    const report = (instanceId: string, killSwitch: boolean, closed = false) => api('POST', `/v1/agents/${agentId}/instances`, {
      apiKey: shared.apiKey,
      body: {
        instance_id: instanceId, hostname: `worker-${instanceId}`, sdk_version: '0.1.0', transport: 'sse', applied_at: new Date().toISOString(),
        policy_version: 3, policy_sequence: 5, policy_hash: `sha256:${'b'.repeat(64)}`, kill_switch_active: killSwitch, ...(closed ? { closed } : {}),
      },
    });
    for (const [id, stopped] of [['i-1', true], ['i-2', true], ['i-3', false]] as const) expect((await report(id, stopped)).status).toBe(200);

    const listed = await json(['agents', 'instances', agentId]);
    expect(listed.data.map((i: Json) => i.instance_id)).toEqual(['i-3', 'i-2', 'i-1']);
    expect(listed.data[0]).toMatchObject({ hostname: 'worker-i-3', connected: true, policy_version: 3, policy_sequence: 5, kill_switch_active: false });
    const people = await corral(['agents', 'instances', agentId]);
    expect(people.code, people.stderr).toBe(0);
    expect(people.stdout).toMatch(/^INSTANCE\s+HOSTNAME\s+SDK\s+TRANSPORT\s+CONNECTED\s+POLICY\s+KILL SWITCH/);
    expect(people.stdout).toMatch(/i-1\s+worker-i-1\s+0\.1\.0\s+sse\s+yes\s+v3 \(seq 5\)\s+ENGAGED/);
    expect(people.stdout).toContain('3 of 3 instances connected; 2 of 3 connected stopped by the kill switch');
    const first = await json(['agents', 'instances', agentId, '--limit', '2']);
    expect(first).toMatchObject({ has_more: true });
    expect((await json(['agents', 'instances', agentId, '--cursor', first.next_cursor as string])).data.map((i: Json) => i.instance_id)).toEqual(['i-1']);
    // An instance that closed says so in its last report: shown as closed, and no longer counted.
    expect((await report('i-2', true, true)).status).toBe(200);
    const after = await corral(['agents', 'instances', agentId]);
    expect(after.stdout).toMatch(/i-2\s+worker-i-2\s+0\.1\.0\s+sse\s+closed\s+v3 \(seq 5\)/);
    expect(after.stdout).toContain('2 of 3 instances connected; 1 of 2 connected stopped by the kill switch');
    // An unknown agent is not found (exit code 4).
    expect((await corral(['agents', 'instances', crypto.randomUUID()])).code).toBe(4);
  });

  it('keys: create prints the key once, restricted scopes work, list never shows it, revoke then delete', async () => {
    const restricted = await corral(['keys', 'create', '--name', 'reader', '--scope', 'restricted', '--resource', 'agents=read', '--resource', 'events=write']);
    expect(restricted.code, restricted.stderr).toBe(0);
    const key = /crl_live_\S+/.exec(restricted.stdout)?.[0] ?? '';
    expect(restricted.stdout).toContain('not shown again');
    expect((await api('GET', '/v1/agents', { apiKey: key })).status).toBe(200);
    expect((await api('POST', '/v1/agents', { apiKey: key, body: { name: 'no' } })).status).toBe(403);

    const list = await corral(['keys', 'list']);
    expect(list.stdout).toContain('reader');
    expect(list.stdout).not.toContain(key);
    const listed = await json(['keys', 'list']);
    const readerId = (listed.data as Json[]).find((k) => k.name === 'reader').id as string;
    expect(JSON.stringify(listed)).not.toContain(key);

    const early = await corral(['keys', 'delete', readerId, '--json']);
    expect(early.code).toBe(5);
    expect(JSON.parse(early.stderr)).toMatchObject({ error: { code: 'api_key_not_revoked' } });
    expect(await json(['keys', 'revoke', readerId])).toEqual({ success: true });
    expect((await api('GET', '/v1/agents', { apiKey: key })).status).toBe(401);
    expect(await json(['keys', 'delete', readerId])).toEqual({ success: true });
    // The free plan's two keys: the shared one and this.
    const full = await json(['keys', 'create', '--name', 'tester', '--scope', 'read-only', '--environment', 'test']);
    expect(full.key).toMatch(/^crl_test_/);
    expect(full.scope).toEqual({ kind: 'read_only' });


    const noResources = await corral(['keys', 'create', '--name', 'x', '--scope', 'restricted']);
    expect(noResources.code).toBe(2);
    const badResource = await corral(['keys', 'create', '--name', 'x', '--scope', 'restricted', '--resource', 'agents=admin']);
    expect(badResource.code).toBe(2);
    expect(badResource.stderr).toMatch(/<resource>=read\|write/);
  });

  it('policies: create from YAML and JSON, list, get, diff, activate and roll back', async () => {
    const state = { agentId: (await api('POST', '/v1/agents', { token: ownerToken, body: { name: 'Policy Bot' } })).body.id as string };
    const dir = mkdtempSync(path.join(tmpdir(), 'corral-policy-'));
    const yamlFile = path.join(dir, 'policy.yaml');
    const jsonFile = path.join(dir, 'policy.json');
    writeFileSync(yamlFile, 'mode: enforce\ndefault: allow\nrules:\n  - name: no-evil\n    deny:\n      url: "evil.example.com/**"\n');
    writeFileSync(jsonFile, JSON.stringify({ mode: 'dry_run', default: 'deny', rules: [{ name: 'stripe', allow: { url: 'api.stripe.com/**' } }] }));
    try {
      const first = await corral(['policies', 'create', state.agentId, '--file', yamlFile, '--activate']);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toMatch(/Created version 1 \(sha256:[0-9a-f]{64}\), now active/);
      expect(await json(['policies', 'create', state.agentId, '--file', jsonFile])).toMatchObject({ version: 2, is_active: false });

      const list = await corral(['policies', 'list', state.agentId]);
      expect(list.stdout).toMatch(/^VERSION\s+ACTIVE\s+MODE/);
      expect(list.stdout).toMatch(/1\s+active\s+enforce/);
      expect(await json(['policies', 'get', state.agentId, 'active'])).toMatchObject({ version: 1, mode: 'enforce' });
      expect(await json(['policies', 'get', state.agentId, '2'])).toMatchObject({ version: 2, mode: 'dry_run' });

      const diff = await corral(['policies', 'diff', state.agentId, '1', '2']);
      expect(diff.stdout).toContain('--- version 1');
      expect(diff.stdout).toContain('-  "mode": "enforce",');
      expect(diff.stdout).toContain('+  "mode": "dry_run",');
      expect(diff.stdout).toContain('+      "name": "stripe",');

      expect(await json(['policies', 'activate', state.agentId, '2'])).toMatchObject({ version: 2, is_active: true });
      expect(await json(['policies', 'activate', state.agentId, '1'])).toMatchObject({ version: 1, is_active: true });
      expect(await json(['agents', 'get', state.agentId])).toMatchObject({ active_policy_mode: 'enforce' });

      writeFileSync(yamlFile, 'mode: enforce\nrules: []\n');
      const invalid = await corral(['policies', 'create', state.agentId, '--file', yamlFile]);
      expect(invalid.code).toBe(2);
      expect(invalid.stderr).toMatch(/invalid_value/);
      const missing = await corral(['policies', 'create', state.agentId, '--file', path.join(dir, 'nope.yaml')]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/cannot read .*ENOENT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('alerts: create, list, get, update, toggle, mute --for, unmute, test, notifications, history, delete', async () => {
    const created = await json([
      'alerts', 'create', '--agent', shared.agentId, '--condition', 'denied_rate', '--threshold', '25', '--channel', 'email', '--target', 'ops@example.com', '--window', '10',
    ]);
    expect(created).toMatchObject({ agent_id: shared.agentId, condition_type: 'denied_rate', threshold: 25, window_minutes: 10, cooldown_minutes: 60, is_enabled: true });
    const state = { agentId: shared.agentId, alertId: created.id as string };
    expect((await corral(['alerts', 'list'])).stdout).toMatch(/denied_rate > 25/);
    expect(await json(['alerts', 'get', state.alertId])).toMatchObject({ id: state.alertId, agent_name: 'Shared Bot' });
    expect(await json(['alerts', 'update', state.alertId, '--threshold', '40', '--cooldown', '5'])).toMatchObject({ threshold: 40, cooldown_minutes: 5, window_minutes: 10 });
    expect(await json(['alerts', 'toggle', state.alertId, 'off'])).toMatchObject({ is_enabled: false });
    expect(await json(['alerts', 'toggle', state.alertId, 'on'])).toMatchObject({ is_enabled: true });

    const before = Date.now();
    const muted = await json(['alerts', 'mute', state.alertId, '--for', '2h', '--reason', 'maintenance']);
    const until = Date.parse(muted.muted_until as string);
    expect(until - before).toBeGreaterThan(2 * 3600_000 - 60_000);
    expect(until - before).toBeLessThan(2 * 3600_000 + 60_000);
    expect(await json(['alerts', 'unmute', state.alertId])).toMatchObject({ muted_until: null });

    // No SMTP server is configured here, so the delivery fails, and the ledger says so.
    const test = await corral(['alerts', 'test', state.alertId]);
    expect(test.code, test.stderr).toBe(0);
    expect(test.stdout).toMatch(/Test notification to ops@example.com: (failed|retrying|delivered)/);
    const ledger = await json(['alerts', 'notifications', state.alertId]);
    expect(ledger.data[0]).toMatchObject({ alert_id: state.alertId, recipient: 'ops@example.com', channel: 'email' });
    expect((await corral(['alerts', 'notifications', state.alertId])).stdout).toMatch(/^TIME\s+KIND\s+CHANNEL\s+RECIPIENT/);
    expect(await json(['alerts', 'history', state.alertId])).toEqual({ data: [], has_more: false, next_cursor: null });
    expect((await corral(['alerts', 'history', state.alertId])).stdout.trim()).toBe('(none)');

    const bad = await corral(['alerts', 'create', '--agent', state.agentId, '--condition', 'denied_rate', '--threshold', '-1', '--channel', 'email', '--target', 'x@example.com']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/threshold/);
    const noWindow = await corral(['alerts', 'mute', state.alertId]);
    expect(noWindow.code).toBe(2);
    const other = await json(['alerts', 'create', '--agent', state.agentId, '--condition', 'error_rate', '--threshold', '5', '--channel', 'email', '--target', 'x@example.com']);
    expect(await json(['alerts', 'delete', other.id as string])).toEqual({ success: true });
  });

  it('events list with every filter, events get, events tail live, and stats that match the API', async () => {
    const state = { agentId: shared.agentId, apiKey: shared.apiKey };
    const now = Date.now();
    const events = [
      { method: 'GET', url_host: 'api.stripe.com', status_code: 200, policy_result: 'allowed', at: now - 5000 },
      { method: 'POST', url_host: 'api.stripe.com', status_code: 402, policy_result: 'error', at: now - 4000 },
      { method: 'POST', url_host: 'evil.example.com', status_code: 403, policy_result: 'denied', deny_reason: 'no-evil', at: now - 3000 },
    ].map((e, i) => ({
      agent_id: state.agentId,
      timestamp: new Date(e.at).toISOString(),
      request_id: `req-${dialect}-${i}`,
      method: e.method,
      url_host: e.url_host,
      url_path: '/v1/charges',
      status_code: e.status_code,
      latency_ms: 100 + i,
      policy_result: e.policy_result,
      ...(e.deny_reason ? { deny_reason: e.deny_reason } : {}),
      ...(i === 0 ? { gen_ai: { system: 'openai', response_model: 'gpt-4o-mini', input_tokens: 1200, output_tokens: 300, cost_usd: 0.25 } } : {}),
    }));
    const sent = await api('POST', '/v1/telemetry', { apiKey: state.apiKey, body: { events } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);

    const all = await json(['events', 'list']);
    expect((all.data as Json[]).map((e) => e.request_id)).toEqual([`req-${dialect}-2`, `req-${dialect}-1`, `req-${dialect}-0`]);
    const ids = async (args: string[]) => ((await json(['events', 'list', ...args])).data as Json[]).map((e) => e.request_id as string);
    const filtered = await Promise.all([
      ids(['--method', 'POST']),
      ids(['--host', 'evil.example.com']),
      ids(['--status', '402']),
      ids(['--result', 'allowed']),
      ids(['--agent', state.agentId, '--limit', '1']),
      ids(['--from', new Date(now - 3500).toISOString(), '--to', new Date(now).toISOString()]),
      ids(['--trace', '0'.repeat(31) + '1']),
    ]);
    expect(filtered).toEqual([
      [`req-${dialect}-2`, `req-${dialect}-1`],
      [`req-${dialect}-2`],
      [`req-${dialect}-1`],
      [`req-${dialect}-0`],
      [`req-${dialect}-2`],
      [`req-${dialect}-2`],
      [],
    ]);
    const table = await corral(['events', 'list', '--result', 'denied']);
    expect(table.stdout).toMatch(/^TIME\s+AGENT\s+METHOD\s+HOST/);
    expect(table.stdout).toMatch(/evil\.example\.com.*denied\s+no-evil/);
    expect(await json(['events', 'get', `req-${dialect}-1`])).toMatchObject({ status_code: 402, policy_result: 'error' });
    expect((await corral(['events', 'list', '--result', 'maybe'])).code).toBe(2);

    const stats = await json(['stats']);
    const fromApi = await api('GET', '/v1/dashboard/stats', { token: ownerToken });
    expect(stats.stats).toEqual(fromApi.body);
    expect(stats.stats).toMatchObject({ total_calls: 3, denied_calls: 1, error_calls: 1 });
    expect(stats.rule_hits).toEqual([expect.objectContaining({ rule_name: 'no-evil', total: 1 })]);
    const human = await corral(['stats']);
    expect(human.stdout).toMatch(/calls\s+3\s+\(allowed 1, denied 1, errors 1\)/);
    expect(human.stdout).toMatch(/calls\s+[▁▂▃▄▅▆▇█]{20,60}\n/);
    expect(human.stdout).toMatch(/denied\s+[▁▂▃▄▅▆▇█]*[▂▃▄▅▆▇█]/);
    expect(human.stdout).toMatch(/api\.stripe\.com\s+2\s+1\s+0\s+1/);

    // With --agent the tail reads only when the agent's dashboard stream says new events were stored.
    const models = await json(['models']);
    expect(models).toEqual((await api('GET', '/v1/dashboard/models', { token: ownerToken })).body);
    expect(models).toEqual([expect.objectContaining({ provider: 'openai', model: 'gpt-4o-mini', calls: 1, input_tokens: 1200, output_tokens: 300 })]);
    expect((await corral(['models'])).stdout).toMatch(/openai\s+gpt-4o-mini\s+1\s+1200\s+300/);

    const tail = spawnBuiltCli(['events', 'tail', '--agent', state.agentId], env);
    try {
      await tail.waitFor(/req-|TIME/);
      const live = { ...events[0], request_id: `live-${dialect}`, timestamp: new Date().toISOString(), url_host: 'live.example.com' };
      expect((await api('POST', '/v1/telemetry', { apiKey: state.apiKey, body: { events: [live] } })).status).toBe(200);
      await tail.waitFor(/live\.example\.com/);
      await corral(['agents', 'kill', state.agentId, '--reason', 'tail test']);
      await tail.waitFor(/kill switch ENGAGED/);
    } finally {
      expect(await tail.stop()).toBe(0);
    }
  });

  it('tells scripts apart from people: --json everywhere, exit codes, completion', async () => {
    const completion = await corral(['completion', 'bash']);
    expect(completion.stdout).toContain('complete -o default -F _corral corral');
    expect((await corral(['__complete', 'agents'])).stdout.split('\n')).toEqual(expect.arrayContaining(['create', 'kill', 'resume', '--json']));
    expect((await corral(['completion', 'zsh'])).stdout).toContain('compdef _corral corral');
    expect((await corral(['completion', 'fish'])).code).toBe(2);
  });
});
