import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../../../test/helpers/build-test-app.js';
import { testDialects } from '../../../test/helpers/test-databases.js';

async function until(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe.each(testDialects)('control bus on %s', (dialect) => {
  let ctx: TestContext;
  let base: string;
  let key: string;
  let owner: { orgId: string; token: string };
  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
    await ctx.api.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(ctx.api.server.address() as AddressInfo).port}`;
    owner = await ctx.newOrg();
    key = (await ctx.createKey(owner.token)).key;
  });
  afterAll(() => ctx.close());

  async function openStream() {
    const agentId = (await ctx.request({ method: 'POST', url: '/v1/agents', token: owner.token, payload: { name: 'bus' } })).json<{ id: string }>().id;
    const res = await fetch(`${base}/v1/agents/${agentId}/control`, { headers: { 'x-api-key': key } });
    const reader = res.body?.getReader();
    if (!reader) throw new Error('no body');
    const state = { text: '' };
    void (async () => {
      const decoder = new TextDecoder();
      for (;;) {
        const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
        if (done) return;
        state.text += decoder.decode(value, { stream: true });
      }
    })();
    await until(() => state.text.includes('event: init'), 'init');
    return { agentId, state, cancel: () => reader.cancel().catch(() => undefined) };
  }

  // A change committed without a hint (as if another process's notification were lost).
  const engageBehindTheBus = (agentId: string) =>
    ctx.testDb.db.kysely.updateTable('agents').set({ kill_switch_active: 1 }).where('id', '=', agentId).execute();

  it('carries hints, not state: the receiver pushes what it reads from the store', async () => {
    const stream = await openStream();
    await engageBehindTheBus(stream.agentId);
    expect(stream.state.text).not.toContain('event: kill_switch');
    const bus = ctx.container.controlBus;
    bus.publish({ kind: 'agent_changed', orgId: owner.orgId, agentId: stream.agentId });
    await until(() => stream.state.text.includes('event: kill_switch\ndata: {"active":true}'), 'kill_switch');
    // A repeated hint finds nothing new to push; the next real change is pushed after it.
    bus.publish({ kind: 'agent_changed', orgId: owner.orgId, agentId: stream.agentId });
    await ctx.request({ method: 'POST', url: `/v1/agents/${stream.agentId}/kill-switch`, token: owner.token, payload: { active: false } });
    await until(() => stream.state.text.includes('event: kill_switch\ndata: {"active":false}'), 'the release');
    expect(stream.state.text.split('event: kill_switch').length - 1).toBe(2);
    await stream.cancel();
  });

  if (dialect === 'postgres') {
    it('re-reads every agent after the listening connection is lost and back', async () => {
      const stream = await openStream();
      const schema = ctx.testDb.pg?.schema ?? '';
      const channel = `corral_control_${createHash('md5').update(schema).digest('hex').slice(0, 16)}`;
      const { rows } = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE query = ${`LISTEN "${channel}"`}`.execute(ctx.testDb.db.kysely);
      expect(rows).toHaveLength(1);
      await sql`SELECT pg_terminate_backend(${rows[0]?.pid ?? 0})`.execute(ctx.testDb.db.kysely);
      await engageBehindTheBus(stream.agentId);
      await until(() => stream.state.text.includes('event: kill_switch\ndata: {"active":true}'), 'the resync to push the missed change');
      await stream.cancel();
    });
  }
});
