import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildCli, createStore, runCli, startCli, type TestStore } from './helpers/cli-process.js';

beforeAll(() => buildCli(), 120_000);

const pgUrl = inject('pgUrl');
const dialects = pgUrl ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);

interface Json {
  [key: string]: unknown;
}

describe.each(dialects)('the CLI on %s', { timeout: 90_000 }, (dialect) => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const close of cleanup.splice(0).reverse()) await close();
  });

  async function freshStore(): Promise<TestStore> {
    const store = await createStore(dialect, pgUrl);
    cleanup.push(() => store.close());
    return store;
  }

  interface Server {
    apiUrl: string;
    stop(): Promise<number | null>;
  }

  async function startServer(store: TestStore): Promise<Server> {
    const server = startCli(store.env);
    // Registered before waiting, so a start that never gets ready is still stopped.
    cleanup.push(() => server.stop());
    const { apiUrl } = await server.ready;
    return { apiUrl, stop: () => server.stop() };
  }

  async function mint(store: TestStore, orgId: string, role: string, extraEnv: Record<string, string> = {}): Promise<string> {
    const res = await runCli(['token', '--org', orgId, '--role', role, '--sub', 'cli-test'], { ...store.env, ...extraEnv });
    expect(res.code, res.stderr).toBe(0);
    return res.stdout.trim();
  }

  async function call(server: Server, method: string, url: string, token: string, body?: unknown) {
    const res = await fetch(`${server.apiUrl}${url}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Json };
  }

  it('migrates a fresh store once; a second run applies nothing', async () => {
    const store = await freshStore();
    const first = await runCli(['migrate', '--json'], store.env);
    expect(first.code, first.stderr).toBe(0);
    const applied = JSON.parse(first.stdout) as { store: string; applied: string[] };
    expect(applied.store).toBe(dialect);
    expect(applied.applied[0]).toBe('0001-init');
    const second = await runCli(['migrate', '--json'], store.env);
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toEqual({ store: dialect, applied: [] });
  });

  it('mints tokens the server accepts, before and after it first starts, and stops on SIGTERM with 0', async () => {
    const store = await freshStore();
    const orgId = crypto.randomUUID();
    // Minted on an empty DATA_DIR: the CLI creates the secret the server then adopts.
    const early = await mint(store, orgId, 'viewer');
    const server = await startServer(store);
    const late = await mint(store, orgId, 'admin');

    expect((await call(server, 'GET', '/v1/agents', early)).status).toBe(200);
    const created = await call(server, 'POST', '/v1/agents', late, { name: 'CLI Agent' });
    expect(created.status).toBe(200);
    expect(created.body.org_id).toBe(orgId);
    const audit = await call(server, 'GET', '/v1/audit-log', late);
    expect(audit.body.data).toEqual([expect.objectContaining({ action: 'agent.create', actor_id: 'cli-test' })]);

    const foreign = await mint(store, orgId, 'admin', { CORRAL_JWT_SECRET: 'a-different-secret-that-is-long-enough-0123' });
    const refused = await call(server, 'GET', '/v1/agents', foreign);
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ error: { code: 'unauthorized' } });

    expect(await server.stop()).toBe(0);
  });

  it('org set-plan moves the plan limits of a running server', async () => {
    const store = await freshStore();
    const server = await startServer(store);
    const orgId = crypto.randomUUID();
    const token = await mint(store, orgId, 'owner');
    const createAgent = (n: number) => call(server, 'POST', '/v1/agents', token, { name: `agent ${n}` });

    for (let n = 1; n <= 5; n++) expect((await createAgent(n)).status).toBe(200);
    const refused = await createAgent(6);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: { code: 'plan_limit_exceeded' } });

    const upgrade = await runCli(['org', 'set-plan', orgId.toUpperCase(), 'team', '--json'], store.env);
    expect(upgrade.code, upgrade.stderr).toBe(0);
    expect(JSON.parse(upgrade.stdout)).toEqual({ org_id: orgId, plan: 'team', previous_plan: 'free' });
    expect((await createAgent(6)).status).toBe(200);

    const downgrade = await runCli(['org', 'set-plan', orgId, 'free'], store.env);
    expect(downgrade.stdout).toMatch(/is on the free plan \(was team\)/);
    expect((await createAgent(7)).body).toMatchObject({ error: { code: 'plan_limit_exceeded' } });

    const audit = await call(server, 'GET', '/v1/audit-log?action=organization.set_plan', token);
    expect(audit.body.data).toEqual([
      expect.objectContaining({ actor_type: 'system', target_id: orgId, details: expect.objectContaining({ plan: 'free', previous_plan: 'team' }) }),
      expect.objectContaining({ actor_type: 'system', target_id: orgId, details: expect.objectContaining({ plan: 'team', previous_plan: 'free' }) }),
    ]);
  });

  it('org set-plan sizes an organization before its first request, on an unmigrated store', async () => {
    const store = await freshStore();
    const orgId = crypto.randomUUID();
    const set = await runCli(['org', 'set-plan', orgId, 'enterprise'], store.env);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(/enterprise plan \(new organization\)/);
    const again = await runCli(['org', 'set-plan', orgId, 'enterprise', '--json'], store.env);
    expect(JSON.parse(again.stdout)).toMatchObject({ previous_plan: 'enterprise' });

    const server = await startServer(store);
    const token = await mint(store, orgId, 'member');
    for (let n = 1; n <= 6; n++) expect((await call(server, 'POST', '/v1/agents', token, { name: `a${n}` })).status).toBe(200);
  });
});
