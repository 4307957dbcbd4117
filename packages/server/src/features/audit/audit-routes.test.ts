import type { AuditEntry, Page } from '@corral/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../../../test/helpers/build-test-app.js';
import { routeName } from '../../../test/helpers/route-catalog.js';
import {
  createOrgFixture, credentialKinds, credentialsOf, fillPath, queryString, send, validBody, validQuery, walkableRoutes,
} from '../../../test/helpers/route-walk.js';
import { testDialects } from '../../../test/helpers/test-databases.js';

/** Changes that are data, not configuration: recorded as telemetry, not in the audit log. */
const notAudited: Record<string, string> = {
  'POST /v1/telemetry': 'telemetry events are the data itself',
  'POST /v1/traces': 'spans are telemetry',
  'POST /v1/agents/:agent_id/instances': 'an SDK process reporting its applied state, every 30 s: telemetry about itself',
  'POST /v1/auth/session': 'a session cookie changes no stored state',
};

describe.each(testDialects)('audit log on %s', (dialect) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
  });
  afterAll(() => ctx.close());

  const auditOf = async (token: string, query = '') => {
    const res = await ctx.request({ method: 'GET', url: `/v1/audit-log${query}`, token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<Page<AuditEntry>>();
  };

  it('records who did what, to what, when and why for every key and agent change', async () => {
    const { orgId } = await ctx.newOrg();
    const token = await ctx.token({ orgId, role: 'owner', subject: 'alice' });
    const at: number[] = [];
    const step = async <T>(fn: () => Promise<T>): Promise<T> => {
      ctx.clock.advance(1000);
      at.push(ctx.clock.now());
      return fn();
    };
    const key = await step(() => ctx.createKey(token));
    const agent = (await step(() => ctx.request({ method: 'POST', url: '/v1/agents', token, payload: { name: 'Audited' } }))).json();
    await step(() => ctx.request({ method: 'PUT', url: `/v1/agents/${agent.id}`, token, payload: { description: 'now with docs' } }));
    await step(() => ctx.request({ method: 'POST', url: `/v1/agents/${agent.id}/kill-switch`, token, payload: { active: true, reason: 'leaking secrets' } }));
    await step(() => ctx.request({ method: 'POST', url: `/v1/agents/${agent.id}/public-key`, apiKey: key.key, payload: { public_key: 'cd'.repeat(32) } }));
    await step(() => ctx.request({ method: 'DELETE', url: `/v1/agents/${agent.id}`, token }));
    await step(() => ctx.request({ method: 'POST', url: `/v1/keys/${key.id}/revoke`, token }));
    await step(() => ctx.request({ method: 'DELETE', url: `/v1/keys/${key.id}`, token }));

    const entries = (await auditOf(token)).data.reverse();
    const user = { actor_type: 'user', actor_id: 'alice' };
    expect(entries.map((e) => [e.action, e.target_type, e.target_id])).toEqual([
      ['api_key.create', 'api_key', key.id],
      ['agent.create', 'agent', agent.id],
      ['agent.update', 'agent', agent.id],
      ['agent.kill_switch', 'agent', agent.id],
      ['agent.public_key.register', 'agent', agent.id],
      ['agent.delete', 'agent', agent.id],
      ['api_key.revoke', 'api_key', key.id],
      ['api_key.delete', 'api_key', key.id],
    ]);
    expect(entries.map((e) => e.created_at)).toEqual(at.map((ms) => new Date(ms).toISOString()));
    expect(entries.every((e) => e.org_id === orgId)).toBe(true);
    expect(entries[0]).toMatchObject({ ...user, details: { name: 'test key', scope: { kind: 'all' }, environment: 'live' } });
    expect(entries[2]).toMatchObject({ ...user, details: { description: 'now with docs' } });
    expect(entries[3]).toMatchObject({ ...user, reason: 'leaking secrets', details: { active: true, previous: false } });
    expect(entries[4]).toMatchObject({ actor_type: 'api_key', actor_id: key.id });
    expect(entries[7]).toMatchObject({ ...user, details: { name: 'test key' } });
    expect(JSON.stringify(entries)).not.toContain(key.key);
  });

  it('records a change only when it happened: a refused change leaves no entry', async () => {
    const { token } = await ctx.newOrg();
    const key = await ctx.createKey(token);
    const before = (await auditOf(token)).data.length;
    await ctx.request({ method: 'DELETE', url: `/v1/keys/${key.id}`, token }); // 409: still active
    await ctx.request({ method: 'POST', url: '/v1/agents', token, payload: { name: '' } }); // 400
    expect((await auditOf(token)).data).toHaveLength(before);
  });

  it('is readable by admin and owner only, never with an API key', async () => {
    const { orgId, token } = await ctx.newOrg();
    const key = await ctx.createKey(token);
    for (const [role, status] of [['viewer', 403], ['member', 403], ['admin', 200], ['owner', 200]] as const) {
      const res = await ctx.request({ method: 'GET', url: '/v1/audit-log', token: await ctx.token({ orgId, role }) });
      expect(res.statusCode, role).toBe(status);
    }
    expect((await ctx.request({ method: 'GET', url: '/v1/audit-log', apiKey: key.key })).statusCode).toBe(403);
  });

  it('pages newest first with cursors and filters by action and target', async () => {
    const { token } = await ctx.newOrg();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await ctx.request({ method: 'POST', url: '/v1/agents', token, payload: { name: `p${i}` } })).json().id);
    const seen: string[] = [];
    let cursor: string | null = null;
    const sizes: number[] = [];
    do {
      const page: Page<AuditEntry> = await auditOf(token, `?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      sizes.push(page.data.length);
      seen.push(...page.data.map((e) => e.target_id));
      expect(page.next_cursor).toBe(page.has_more ? page.data[page.data.length - 1]?.id : null);
      cursor = page.next_cursor;
    } while (cursor);
    expect(sizes).toEqual([3, 3, 1]);
    expect(seen).toEqual([...ids].reverse());
    expect((await auditOf(token, `?target_id=${ids[2]}`)).data.map((e) => e.target_id)).toEqual([ids[2]]);
    expect((await auditOf(token, '?action=agent.delete')).data).toEqual([]);
    for (const query of ['?limit=0', '?limit=201', '?cursor=not-a-cursor', `?action=${'a'.repeat(101)}`]) {
      const res = await ctx.request({ method: 'GET', url: `/v1/audit-log${query}`, token });
      expect(res.statusCode, query).toBe(400);
      expect(res.json().error.code).toBe('invalid_value');
    }
    expect((await auditOf(token, '?limit=200')).data).toHaveLength(7);
  });

  it('records every successful change on every route, whoever registered it', async () => {
    const routes = walkableRoutes(ctx)
      .filter((r) => r.method !== 'GET' && !r.auth?.public)
      // Revocations before deletions, deletions last, so each change has something to act on.
      .sort((x, y) => Number(x.method === 'DELETE') - Number(y.method === 'DELETE'));
    const org = await createOrgFixture(ctx, walkableRoutes(ctx), 'audit');
    const unrecorded: string[] = [];
    const neverSucceeded: string[] = [];
    for (const route of routes) {
      const name = `${route.method} ${route.url}`;
      if (notAudited[name]) continue;
      const before = (await auditOf(org.token, '?limit=1')).data[0]?.id;
      const payload = validBody(route, org.ids);
      const kind = credentialKinds(route)[0] ?? 'user';
      const res = await send(ctx, {
        method: route.method, url: fillPath(route.url, org.ids) + queryString(validQuery(route, org.ids)), host: route.host,
        ...credentialsOf(org, kind), ...(payload === undefined ? {} : { payload: payload as object }),
      });
      if (res.statusCode >= 300) {
        neverSucceeded.push(`${routeName(route)}: ${res.statusCode} ${res.body.slice(0, 150)}`);
        continue;
      }
      const newest = (await auditOf(org.token, '?limit=1')).data[0];
      if (!newest || newest.id === before) unrecorded.push(routeName(route));
    }
    expect(unrecorded).toEqual([]);
    expect(neverSucceeded).toEqual([]);
  });
});
