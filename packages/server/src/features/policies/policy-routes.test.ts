import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../../../test/helpers/build-test-app.js';
import { testDialects } from '../../../test/helpers/test-databases.js';

const enforce = { mode: 'enforce', default: 'allow', rules: [{ name: 'no-refunds', deny: { url: 'api.stripe.com/v1/refunds/**' } }] };
/** The smallest valid document: `default` is the one field without a default. */
const minimal = { default: 'allow' };

describe.each(testDialects)('policies on %s', (dialect) => {
  let ctx: TestContext;
  let owner: { orgId: string; token: string };
  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
    owner = await ctx.newOrg();
  });
  afterAll(() => ctx.close());

  const newAgent = async (token = owner.token): Promise<string> =>
    (await ctx.request({ method: 'POST', url: '/v1/agents', token, payload: { name: 'Policy Bot' } })).json<{ id: string }>().id;
  const createPolicy = (agentId: string, payload: Record<string, unknown>, auth: { token?: string; apiKey?: string } = { token: owner.token }) =>
    ctx.request({ method: 'POST', url: `/v1/agents/${agentId}/policies`, payload, ...auth });

  it('creates numbered versions from JSON and YAML, with a stable hash', async () => {
    const agentId = await newAgent();
    const first = await createPolicy(agentId, { policy: enforce, description: 'first' });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ agent_id: agentId, version: 1, mode: 'enforce', description: 'first', is_active: false, activated_at: null, policy: enforce });
    const yaml = 'mode: enforce\ndefault: allow\nrules:\n  - name: no-refunds\n    deny:\n      url: "api.stripe.com/v1/refunds/**"\n';
    const second = await createPolicy(agentId, { yaml_content: yaml });
    expect(second.json()).toMatchObject({ version: 2, policy: enforce, description: null });
    expect(second.json().hash).toBe(first.json().hash);
    expect(first.json().hash).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('fills defaults and takes exactly one of policy and yaml_content', async () => {
    const agentId = await newAgent();
    expect((await createPolicy(agentId, { policy: minimal })).json().policy).toEqual({ mode: 'dry_run', default: 'allow', rules: [] });
    const both = await createPolicy(agentId, { policy: minimal, yaml_content: 'default: allow' });
    expect(both.statusCode).toBe(400);
    expect(both.json().error.code).toBe('invalid_value');
    expect((await createPolicy(agentId, {})).statusCode).toBe(400);
    expect((await createPolicy(agentId, { policy: [] })).statusCode).toBe(400);
  });

  it('requires default, from JSON and from YAML', async () => {
    const agentId = await newAgent();
    for (const [payload, field] of [[{ policy: {} }, 'policy.default'], [{ yaml_content: 'mode: enforce\n' }, 'yaml_content.default']] as const) {
      const res = await createPolicy(agentId, payload);
      expect(res.statusCode, field).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'invalid_value', details: [{ field, message: 'is required' }] });
    }
    expect((await ctx.request({ method: 'GET', url: `/v1/agents/${agentId}/policies`, token: owner.token })).json().data).toEqual([]);
  });

  it('refuses an invalid document with a 400 that names the rule', async () => {
    const agentId = await newAgent();
    const res = await createPolicy(agentId, { policy: { default: 'allow', rules: [{ name: 'ok', allow: { url: 'a.com' } }, { name: 'typo', deny: { urls: 'x' } }] } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'invalid_value' });
    expect(res.json().error.message).toContain('rule "typo"');
    expect(res.json().error.details[0]).toEqual({ field: 'policy.rules[1].deny.urls', message: 'rule "typo" (rules[1]): is not a known field' });
    const yaml = await createPolicy(agentId, { yaml_content: 'default: allow\nrules:\n  - name: twice\n    allow: {url: a.com}\n  - name: twice\n    deny: {url: b.com}\n' });
    expect(yaml.statusCode).toBe(400);
    expect(yaml.json().error.details[0].field).toBe('yaml_content.rules[1].name');
    const list = await ctx.request({ method: 'GET', url: `/v1/agents/${agentId}/policies`, token: owner.token });
    expect(list.json().data).toEqual([]);
  });

  it('activates a version: agent mode, active endpoint, audit log', async () => {
    const agentId = await newAgent();
    expect((await ctx.request({ method: 'GET', url: `/v1/agents/${agentId}/policies/active`, token: owner.token })).statusCode).toBe(404);
    await createPolicy(agentId, { policy: { mode: 'dry_run', default: 'allow' } });
    await createPolicy(agentId, { policy: enforce });
    const activated = await ctx.request({ method: 'POST', url: `/v1/agents/${agentId}/policies/1/activate`, token: owner.token });
    expect(activated.json()).toMatchObject({ version: 1, is_active: true, mode: 'dry_run' });
    expect(Date.parse(activated.json().activated_at)).not.toBeNaN();
    expect((await ctx.request({ method: 'GET', url: `/v1/agents/${agentId}`, token: owner.token })).json().active_policy_mode).toBe('dry_run');

    await ctx.request({ method: 'POST', url: `/v1/agents/${agentId}/policies/2/activate`, token: owner.token });
    const active = await ctx.request({ method: 'GET', url: `/v1/agents/${agentId}/policies/active`, token: owner.token });
    expect(active.json()).toMatchObject({ version: 2, is_active: true, mode: 'enforce' });
    expect((await ctx.request({ method: 'GET', url: `/v1/agents/${agentId}`, token: owner.token })).json().active_policy_mode).toBe('enforce');
    expect((await ctx.request({ method: 'GET', url: `/v1/agents/${agentId}/policies/1`, token: owner.token })).json().is_active).toBe(false);

    const audit = await ctx.request({ method: 'GET', url: `/v1/audit-log?target_id=${agentId}`, token: owner.token });
    const actions = audit.json<{ data: Array<{ action: string; details: { version: number } }> }>().data.map((e) => `${e.action}:${e.details.version}`);
    expect(actions).toEqual(['policy.activate:2', 'policy.activate:1', 'policy.create:2', 'policy.create:1', 'agent.create:undefined']);
  });

  it('rolls back by activating an older version, each activation under the next sequence; re-activation changes nothing', async () => {
    const agentId = await newAgent();
    await createPolicy(agentId, { policy: { default: 'allow' } });
    await createPolicy(agentId, { policy: enforce, activate: true });
    const older = await ctx.request({ method: 'POST', url: `/v1/agents/${agentId}/policies/1/activate`, token: owner.token });
    expect(older.statusCode).toBe(200);
    expect(older.json()).toMatchObject({ version: 1, is_active: true, mode: 'dry_run' });
    expect((await ctx.request({ method: 'GET', url: `/v1/agents/${agentId}/policies/active`, token: owner.token })).json().version).toBe(1);
    expect((await ctx.request({ method: 'GET', url: `/v1/agents/${agentId}`, token: owner.token })).json().active_policy_mode).toBe('dry_run');
    const again = await ctx.request({ method: 'POST', url: `/v1/agents/${agentId}/policies/1/activate`, token: owner.token });
    expect(again.json()).toMatchObject({ version: 1, is_active: true });
    const audit = await ctx.request({ method: 'GET', url: `/v1/audit-log?target_id=${agentId}&action=policy.activate`, token: owner.token });
    expect(audit.json().data.map((e: { details: unknown }) => e.details)).toEqual([
      { version: 1, hash: expect.stringMatching(/^sha256:/), mode: 'dry_run', previous: 2, sequence: 2 },
      { version: 2, hash: expect.stringMatching(/^sha256:/), mode: 'enforce', sequence: 1 },
    ]);
    expect((await ctx.request({ method: 'POST', url: `/v1/agents/${agentId}/policies/3/activate`, token: owner.token })).statusCode).toBe(404);
  });

  it('lists newest first and pages by version', async () => {
    const agentId = await newAgent();
    for (let i = 0; i < 5; i++) await createPolicy(agentId, { policy: { default: 'allow', rules: [{ name: `r${i}`, allow: { url: 'a.com' } }] } });
    const page1 = (await ctx.request({ method: 'GET', url: `/v1/agents/${agentId}/policies?limit=2`, token: owner.token })).json();
    expect(page1.data.map((v: { version: number }) => v.version)).toEqual([5, 4]);
    expect(page1).toMatchObject({ has_more: true, next_cursor: '4' });
    const page3 = (await ctx.request({ method: 'GET', url: `/v1/agents/${agentId}/policies?limit=2&cursor=2`, token: owner.token })).json();
    expect(page3).toMatchObject({ has_more: false, next_cursor: null });
    expect(page3.data.map((v: { version: number }) => v.version)).toEqual([1]);
    expect((await ctx.request({ method: 'GET', url: `/v1/agents/${agentId}/policies?cursor=abc`, token: owner.token })).statusCode).toBe(400);
  });

  it('enforces roles and the policies scope of API keys', async () => {
    const agentId = await newAgent();
    const viewer = await ctx.token({ orgId: owner.orgId, role: 'viewer' });
    expect((await createPolicy(agentId, { policy: minimal }, { token: viewer })).statusCode).toBe(403);
    const member = await ctx.token({ orgId: owner.orgId, role: 'member' });
    expect((await createPolicy(agentId, { policy: minimal }, { token: member })).statusCode).toBe(200);

    const agentsOnly = await ctx.createKey(owner.token, { kind: 'restricted', resources: { agents: 'write' } });
    expect((await createPolicy(agentId, { policy: minimal }, { apiKey: agentsOnly.key })).statusCode).toBe(403);
    expect((await ctx.request({ method: 'GET', url: `/v1/agents/${agentId}/policies`, apiKey: agentsOnly.key })).statusCode).toBe(403);

    const policyReader = await ctx.createKey(owner.token, { kind: 'restricted', resources: { policies: 'read' } });
    expect((await ctx.request({ method: 'GET', url: `/v1/agents/${agentId}/policies`, apiKey: policyReader.key })).statusCode).toBe(200);
    expect((await createPolicy(agentId, { policy: minimal }, { apiKey: policyReader.key })).statusCode).toBe(403);
    expect((await ctx.request({ method: 'POST', url: `/v1/agents/${agentId}/policies/1/activate`, apiKey: policyReader.key })).statusCode).toBe(403);

    const policyWriter = await ctx.createKey(owner.token, { kind: 'restricted', resources: { policies: 'write' } });
    const created = await createPolicy(agentId, { policy: minimal, activate: true }, { apiKey: policyWriter.key });
    expect(created.statusCode).toBe(200);
    const audit = await ctx.request({ method: 'GET', url: `/v1/audit-log?target_id=${agentId}&action=policy.activate`, token: owner.token });
    expect(audit.json().data[0]).toMatchObject({ actor_type: 'api_key', actor_id: policyWriter.id });
  });

  it("answers 404 for another organization's agent and for a deleted agent", async () => {
    const agentId = await newAgent();
    await createPolicy(agentId, { policy: minimal, activate: true });
    const other = await ctx.newOrg();
    for (const url of [`/v1/agents/${agentId}/policies`, `/v1/agents/${agentId}/policies/1`, `/v1/agents/${agentId}/policies/active`]) {
      expect((await ctx.request({ method: 'GET', url, token: other.token })).statusCode).toBe(404);
    }
    expect((await createPolicy(agentId, { policy: minimal }, { token: other.token })).statusCode).toBe(404);
    expect((await ctx.request({ method: 'POST', url: `/v1/agents/${agentId}/policies/1/activate`, token: other.token })).statusCode).toBe(404);
    await ctx.request({ method: 'DELETE', url: `/v1/agents/${agentId}`, token: owner.token });
    expect((await ctx.request({ method: 'GET', url: `/v1/agents/${agentId}/policies/1`, token: owner.token })).statusCode).toBe(404);
  });

  it('numbers concurrent creations one after another', async () => {
    const agentId = await newAgent();
    const results = await Promise.all(Array.from({ length: 8 }, () => createPolicy(agentId, { policy: minimal })));
    expect(results.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
    expect(results.map((r) => r.json().version).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });
});
