import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../../../test/helpers/build-test-app.js';
import { testDialects } from '../../../test/helpers/test-databases.js';

describe.each(testDialects)('agents on %s', (dialect) => {
  let ctx: TestContext;
  let owner: { orgId: string; token: string };
  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
    owner = await ctx.newOrg();
  });
  afterAll(() => ctx.close());

  const create = (name: string, token = owner.token, extra: Record<string, unknown> = {}) =>
    ctx.request({ method: 'POST', url: '/v1/agents', token, payload: { name, ...extra } });

  it('creates an agent with every field and no active_policy_mode', async () => {
    const res = await create('Billing Bot', owner.token, { description: 'pays invoices' });
    expect(res.statusCode).toBe(200);
    const agent = res.json();
    expect(agent).toMatchObject({
      org_id: owner.orgId, name: 'Billing Bot', slug: 'billing-bot', description: 'pays invoices',
      status: 'active', public_key: null, kill_switch_active: false,
    });
    expect(agent).not.toHaveProperty('active_policy_mode');
    expect(Date.parse(agent.created_at)).not.toBeNaN();
    const got = await ctx.request({ method: 'GET', url: `/v1/agents/${agent.id}`, token: owner.token });
    expect(got.json()).toMatchObject({ id: agent.id, active_policy_mode: null });
  });

  it('keeps slugs unique per organization, also after a soft delete', async () => {
    const { token } = await ctx.newOrg();
    const a = (await create('Same Name', token)).json();
    const b = (await create('Same Name', token)).json();
    expect([a.slug, b.slug]).toEqual(['same-name', 'same-name-2']);
    await ctx.request({ method: 'DELETE', url: `/v1/agents/${a.id}`, token });
    expect((await create('Same Name', token)).json().slug).toBe('same-name-3');
    const other = await ctx.newOrg();
    expect((await create('Same Name', other.token)).json().slug).toBe('same-name');
  });
});
