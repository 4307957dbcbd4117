import { signJwt } from '@corral/server';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createStore, type TestStore } from '../../cli/test/helpers/cli-process.js';
import { startServerProcess, type ServerProcess } from '../../server/test/helpers/server-process.js';

/**
 * The built dashboard in headless Chromium (Debian's package, driven by playwright-core) against
 * a running server: one browser for the file, pages reused. UPDATE_SCREENSHOTS=1 also writes the
 * screenshots in docs/screenshots/.
 */
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const screenshots = process.env.UPDATE_SCREENSHOTS === '1' ? path.join(repoRoot, 'docs/screenshots') : undefined;
const pgUrl = inject('pgUrl');
// The page speaks HTTP only: one store is enough (PostgreSQL when the run has it, as CI does).
const dialect = pgUrl ? 'postgres' : 'sqlite';
const JWT_SECRET = 'dashboard-test-secret-0123456789-abcdefghijkl';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON answers judged by expect()
type Json = any;

describe(`the dashboard in Chromium against a running server on ${dialect}`, { timeout: 60_000 }, () => {
  let store: TestStore;
  let server: ServerProcess;
  let browser: Browser;
  let first: BrowserContext;
  let page: Page;
  let token: string;
  const orgId = crypto.randomUUID();
  const seed = { agentId: '', otherAgentId: '', apiKey: '' };
  const outside: string[] = [];

  async function api(method: string, url: string, init: { apiKey?: string; body?: unknown } = {}): Promise<Json> {
    const res = await fetch(`${server.api}${url}`, {
      method,
      headers: {
        ...(init.apiKey ? { 'x-api-key': init.apiKey } : { authorization: `Bearer ${token}` }),
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
    expect(res.status, `${method} ${url}`).toBeLessThan(300);
    return res.json();
  }

  const reportInstance = (instanceId: string, killSwitch: boolean, closed = false) => api('POST', `/v1/agents/${seed.agentId}/instances`, {
    apiKey: seed.apiKey,
    body: {
      instance_id: instanceId, hostname: `host-${instanceId}`, sdk_version: '0.1.0', transport: 'sse', applied_at: new Date().toISOString(),
      policy_version: 1, policy_sequence: 1, policy_hash: `sha256:${'c'.repeat(64)}`, kill_switch_active: killSwitch, ...(closed ? { closed } : {}),
    },
  });

  async function shot(p: Page, name: string): Promise<void> {
    if (!screenshots) return;
    mkdirSync(screenshots, { recursive: true });
    await p.screenshot({ path: path.join(screenshots, `${name}.png`), fullPage: true });
  }

  async function signedInContext(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const p = await context.newPage();
    // Every request the page makes must stay on the server's origin: no CDN, no font host.
    p.on('request', (r) => {
      if (!r.url().startsWith(server.api) && !r.url().startsWith('data:')) outside.push(r.url());
    });
    await p.goto(`${server.api}/`);
    await p.getByLabel('Token (JWT)').fill(token);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.getByRole('heading', { name: 'Overview' }).waitFor();
    return { context, page: p };
  }

  beforeAll(async () => {
    execFileSync(process.execPath, [path.join(repoRoot, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'], { cwd: path.join(repoRoot, 'packages/dashboard'), stdio: 'pipe' });
    store = await createStore(dialect, pgUrl);
    server = await startServerProcess({ ...store.env, CORRAL_JWT_SECRET: JWT_SECRET });
    token = await signJwt(JWT_SECRET, { orgId, role: 'owner', subject: 'dana' }, 3600);
    seed.agentId = (await api('POST', '/v1/agents', { body: { name: 'Checkout Bot' } })).id as string;
    seed.otherAgentId = (await api('POST', '/v1/agents', { body: { name: 'Search Bot' } })).id as string;
    seed.apiKey = (await api('POST', '/v1/keys', { body: { name: 'sdk', scope: { kind: 'all' } } })).key as string;
    await api('POST', `/v1/agents/${seed.agentId}/policies`, {
      body: { yaml_content: 'mode: enforce\ndefault: allow\nrules:\n  - name: no-evil\n    deny:\n      url: "evil.example.com/**"\n', activate: true },
    });
    await api('POST', `/v1/agents/${seed.agentId}/policies`, { body: { yaml_content: 'mode: dry_run\ndefault: allow\nrules: []\n' } });
    const now = Date.now();
    const events = Array.from({ length: 30 }, (_, i) => ({
      agent_id: i % 5 === 4 ? seed.otherAgentId : seed.agentId,
      timestamp: new Date(now - (30 - i) * 60_000).toISOString(),
      request_id: `ui-${i}`,
      method: i % 3 === 0 ? 'POST' : 'GET',
      url_host: i % 7 === 0 ? 'evil.example.com' : i % 2 === 0 ? 'api.stripe.com' : 'api.openai.com',
      url_path: '/v1/items/{id}',
      status_code: i % 7 === 0 ? 403 : i % 11 === 0 ? 500 : 200,
      latency_ms: 40 + i * 3,
      policy_result: i % 7 === 0 ? 'denied' : i % 11 === 0 ? 'error' : 'allowed',
      ...(i % 7 === 0 ? { deny_reason: 'no-evil' } : {}),
      ...(i % 6 === 1 ? { gen_ai: { system: 'anthropic', response_model: 'claude-sonnet', input_tokens: 1000, output_tokens: 250 } } : {}),
    }));
    await api('POST', '/v1/telemetry', { apiKey: seed.apiKey, body: { events } });
    // Two SDK processes of the agent report what they applied, as the SDK does.
    for (const id of ['sdk-a', 'sdk-b']) await reportInstance(id, false);

    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    ({ context: first, page } = await signedInContext());
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await store?.close();
  });

  it('signs in with a pasted token and shows the numbers the API gives', async () => {
    const stats = await api('GET', '/v1/dashboard/stats');
    expect(stats.total_calls).toBe(30);
    await expect.poll(() => page.getByTestId('stat-total').textContent()).toBe(String(stats.total_calls));
    expect(await page.getByTestId('stat-denied').textContent()).toBe(String(stats.denied_calls));
    expect(await page.getByTestId('stat-errors').textContent()).toBe(String(stats.error_calls));
    const hosts = await api('GET', '/v1/dashboard/hosts');
    const topHosts = page.getByRole('table', { name: 'Top hosts' });
    expect(await topHosts.locator('tbody tr').count()).toBe(hosts.length);
    await expect.poll(() => topHosts.locator('tbody tr').first().textContent()).toContain(hosts[0].url_host as string);
    expect(await page.getByRole('table', { name: 'Rule hits' }).locator('tbody tr').first().textContent()).toContain('no-evil');
    expect(await page.locator('.chart canvas').count()).toBeGreaterThan(0);
    const models = await api('GET', '/v1/dashboard/models');
    expect(models).toEqual([expect.objectContaining({ provider: 'anthropic', model: 'claude-sonnet', calls: 5, input_tokens: 5000 })]);
    const modelRow = page.getByRole('table', { name: 'Tokens and cost by model' }).locator('tbody tr');
    await expect.poll(() => modelRow.first().textContent()).toContain('claude-sonnet');
    expect(await modelRow.first().textContent()).toContain(String(models[0].input_tokens));
    await shot(page, 'overview');

    const fresh = await browser.newContext();
    const signIn = await fresh.newPage();
    await signIn.goto(`${server.api}/`);
    await signIn.getByLabel('Token (JWT)').fill('not-a-token');
    await signIn.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => signIn.getByRole('alert').textContent()).toMatch(/401 unauthorized/);
    await signIn.getByLabel('Token (JWT)').fill('');
    await shot(signIn, 'sign-in');
    await fresh.close();
  });

  it('loads deep links, keeps unknown /v1/* paths JSON errors, and flips a kill switch that a second browser sees within a second', async () => {
    const second = await signedInContext();
    try {
      await second.page.goto(`${server.api}/agents/${seed.agentId}`);
      await second.page.getByRole('heading', { name: 'Checkout Bot' }).waitFor();
      expect(await second.page.getByTestId('kill-state').textContent()).toBe('Running');

      await page.goto(`${server.api}/agents`);
      await page.getByRole('link', { name: 'Checkout Bot' }).waitFor();
      await shot(page, 'agents');
      await page.getByRole('link', { name: 'Checkout Bot' }).click();
      await page.getByRole('heading', { name: 'Checkout Bot' }).waitFor();
      await page.getByRole('button', { name: 'Kill Checkout Bot' }).click();
      const dialog = page.getByRole('dialog', { name: 'Kill Checkout Bot?' });
      await dialog.getByLabel('Reason').fill('runaway loop');
      const flipped = page.waitForResponse((r) => r.url().endsWith('/kill-switch') && r.status() === 200);
      await dialog.getByRole('button', { name: 'Engage kill switch' }).click();
      await flipped;
      const at = Date.now();
      await second.page.getByTestId('kill-state').filter({ hasText: 'Killed' }).waitFor({ timeout: 1000 });
      expect(Date.now() - at).toBeLessThan(1000);
      expect((await api('GET', `/v1/agents/${seed.agentId}`)).kill_switch_active).toBe(true);
      const audit = await api('GET', '/v1/audit-log?action=agent.kill_switch');
      expect(audit.data[0]).toMatchObject({ target_id: seed.agentId, reason: 'runaway loop', actor_id: 'dana' });
      // The agent's own hosts and rule hits, as the API counts them for it (the seed sent a fifth
      // of the calls for another agent).
      const own = await api('GET', `/v1/dashboard/hosts?agent_id=${seed.agentId}`);
      const orgHosts = await api('GET', '/v1/dashboard/hosts');
      expect(own.find((h: Json) => h.url_host === 'api.stripe.com').call_count).toBeLessThan(orgHosts.find((h: Json) => h.url_host === 'api.stripe.com').call_count);
      const agentHosts = page.getByRole('table', { name: 'Top hosts' }).locator('tbody tr');
      expect(await agentHosts.count()).toBe(own.length);
      for (const [i, h] of own.entries()) expect(await agentHosts.nth(i).textContent()).toBe(`${h.url_host}${h.call_count}${h.allowed_count}${h.denied_count}${h.error_count}`);
      const ruleHits = await api('GET', `/v1/dashboard/rule-hits?agent_id=${seed.agentId}`);
      expect(await page.getByRole('table', { name: 'Rule hits' }).locator('tbody tr').first().textContent()).toBe(`no-evil${ruleHits[0].total}${ruleHits[0].denied}${ruleHits[0].dry_run}`);
      // The agent's instances: one applies the kill switch and reports it; the page counts it.
      const instances = page.getByRole('table', { name: 'SDK instances' });
      expect(await instances.getByRole('row').count()).toBe(3);
      expect(await page.getByTestId('instances-summary').textContent()).toBe('0 of 2 connected instances stopped');
      await reportInstance('sdk-a', true);
      await page.getByTestId('instances-summary').filter({ hasText: '1 of 2 connected instances stopped' }).waitFor({ timeout: 5000 });
      expect(await instances.getByRole('row', { name: /sdk-a/ }).textContent()).toMatch(/host-sdk-a.*v1 \(seq 1\).*Stopped/);
      expect(await instances.getByRole('row', { name: /sdk-b/ }).textContent()).toMatch(/Running/);
      await shot(page, 'agent');
      // An instance that closes says so; the page shows it as closed and stops counting it.
      await reportInstance('sdk-b', false, true);
      await page.getByTestId('instances-summary').filter({ hasText: '1 of 1 connected instance stopped' }).waitFor({ timeout: 5000 });
      expect(await instances.getByRole('row', { name: /sdk-b/ }).textContent()).toMatch(/sse\s*closed/);

      const api404 = await second.page.goto(`${server.api}/v1/no-such-thing`);
      expect(api404?.status()).toBe(404);
      expect(JSON.parse(await api404!.text())).toMatchObject({ error: { code: 'not_found' } });
    } finally {
      await second.context.close();
    }
  });

  it('filters the event table and pages through it with the cursor', async () => {
    await page.goto(`${server.api}/agents/${seed.agentId}`);
    const table = page.getByRole('table', { name: 'Events' });
    await table.waitFor();
    const all = await api('GET', `/v1/dashboard/events?agent_id=${seed.agentId}&limit=100`);
    expect(await table.locator('tbody tr').count()).toBe(20);
    await page.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(() => table.locator('tbody tr').count()).toBe(all.data.length - 20);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await expect.poll(() => table.locator('tbody tr').count()).toBe(20);

    await page.getByLabel('Result').selectOption('denied');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const denied = await api('GET', `/v1/dashboard/events?agent_id=${seed.agentId}&policy_result=denied`);
    expect(denied.data.length).toBeGreaterThan(0);
    await expect.poll(() => table.locator('tbody tr').count()).toBe(denied.data.length);
    for (const text of await table.locator('tbody tr').allTextContents()) expect(text).toContain('denied');

    await page.getByLabel('Host', { exact: true }).fill('api.stripe.com');
    await page.getByLabel('Result').selectOption('');
    await page.getByLabel('Method').fill('POST');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const stripePosts = await api('GET', `/v1/dashboard/events?agent_id=${seed.agentId}&url_host=api.stripe.com&method=POST`);
    await expect.poll(() => table.locator('tbody tr').count()).toBe(stripePosts.data.length);
    await page.getByRole('button', { name: 'Clear' }).click();

    await page.getByRole('button', { name: 'Start live tail' }).click();
    await api('POST', '/v1/telemetry', {
      apiKey: seed.apiKey,
      body: { events: [{ agent_id: seed.agentId, timestamp: new Date().toISOString(), request_id: 'ui-live', method: 'GET', url_host: 'live.example.com', url_path: '/', status_code: 200, latency_ms: 5, policy_result: 'allowed' }] },
    });
    await page.getByRole('table', { name: 'Live events' }).getByText('live.example.com').waitFor({ timeout: 5000 });
  });

  it('creates a key and shows it once', async () => {
    await page.goto(`${server.api}/keys`);
    await page.getByLabel('Name').fill('ci deploys');
    await page.getByLabel('Scope').selectOption('restricted');
    await page.getByLabel('agents').selectOption('read');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = (await page.getByTestId('new-key').textContent()) ?? '';
    expect(shown).toMatch(/^crl_live_/);
    // The key the page showed is a working key, with the scope asked for.
    const res = await fetch(`${server.api}/v1/agents`, { headers: { 'x-api-key': shown } });
    expect(res.status).toBe(200);
    await shot(page, 'keys');
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.content()).not.toContain(shown);
    await page.reload();
    await page.getByRole('table', { name: 'API keys' }).getByRole('cell', { name: 'ci deploys', exact: true }).waitFor();
    expect(await page.content()).not.toContain(shown);
    expect(await page.getByRole('table', { name: 'API keys' }).textContent()).toContain('agents:read');

    await page.getByRole('button', { name: 'Revoke ci deploys' }).click();
    await page.getByRole('button', { name: 'Delete ci deploys' }).click();
    await expect.poll(async () => (await api('GET', '/v1/keys')).data.map((k: Json) => k.name as string)).toEqual(['sdk']);
  });

  it('creates an alert, tests it, and shows its history and notification ledger', async () => {
    await page.goto(`${server.api}/alerts`);
    await page.getByLabel('Agent').selectOption({ label: 'Checkout Bot' });
    await page.getByLabel('Condition').selectOption('denied_rate');
    await page.getByLabel('Threshold').fill('20');
    await page.getByLabel('Email address').fill('oncall@example.com');
    await page.getByRole('button', { name: 'Create alert' }).click();
    const rules = page.getByRole('table', { name: 'Alert rules' });
    await rules.getByText('denied_rate > 20 over 15m').waitFor();
    const listed = await api('GET', '/v1/alerts');
    expect(listed.data).toEqual([expect.objectContaining({ agent_id: seed.agentId, condition_type: 'denied_rate', threshold: 20, channel_target: 'oncall@example.com' })]);
    await shot(page, 'alerts');

    await rules.getByRole('link', { name: 'Checkout Bot' }).click();
    await page.getByRole('heading', { name: /denied_rate > 20 on Checkout Bot/ }).waitFor();
    await page.getByRole('button', { name: 'Send test' }).click();
    await page.getByRole('status').filter({ hasText: 'Test notification to oncall@example.com' }).waitFor();
    await page.getByRole('table', { name: 'Notification ledger' }).getByText('oncall@example.com').waitFor();
    await shot(page, 'alert');
  });

  it('lists policy versions, shows a diff, and rolls back', async () => {
    await page.goto(`${server.api}/agents/${seed.agentId}/policies`);
    const versions = page.getByRole('table', { name: 'Policy versions' });
    await versions.waitFor();
    expect(await versions.locator('tbody tr').count()).toBe(2);
    const diff = page.getByLabel('Changes from v1 to v2');
    expect(await diff.textContent()).toContain('-   "mode": "enforce",');
    await page.getByRole('button', { name: 'Activate v2' }).click();
    await page.getByRole('button', { name: 'Roll back to v1' }).waitFor();
    expect((await api('GET', `/v1/agents/${seed.agentId}/policies/active`)).version).toBe(2);
    await shot(page, 'policies');
    await page.getByRole('button', { name: 'Roll back to v1' }).click();
    await page.getByRole('button', { name: 'Activate v2' }).waitFor();
    expect((await api('GET', `/v1/agents/${seed.agentId}/policies/active`)).version).toBe(1);
  });

  it('shows the audit log, and never asked another origin for anything', async () => {
    await page.goto(`${server.api}/audit`);
    const log = page.getByRole('table', { name: 'Audit log' });
    await log.getByText('agent.kill_switch').first().waitFor();
    await page.getByLabel('Action').fill('policy.activate');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(async () => (await log.locator('tbody tr').allTextContents()).every((t) => t.includes('policy.activate'))).toBe(true);
    await shot(page, 'audit');
    expect(outside).toEqual([]);
    await first.close();
  });
});
