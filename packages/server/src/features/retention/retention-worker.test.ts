import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../../../test/helpers/build-test-app.js';
import { event, newTelemetryOrg, postEvents, stampEventsWith } from '../../../test/helpers/telemetry-fixtures.js';
import { telemetryTestStores } from '../../../test/helpers/test-databases.js';
import { partitionName } from '../telemetry/index.js';

const DAY = 86_400_000;

describe.each(telemetryTestStores)('telemetry retention on %s', (dialect) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
    stampEventsWith(ctx.clock);
  });
  afterAll(() => ctx.close());

  const k = () => ctx.testDb.db.kysely;
  const rows = async (table: 'telemetry_events' | 'telemetry_rollups' | 'telemetry_host_rollups', orgId: string, before: number) => {
    const column = table === 'telemetry_events' ? 'ts' : 'bucket_start';
    const r = await k().selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', orgId).where(column, '<', before).executeTakeFirstOrThrow();
    return Number(r.n);
  };

  it('drops raw events and rollups older than the retention period and keeps the rest', async () => {
    const org = await newTelemetryOrg(ctx);
    const start = ctx.clock.now();
    expect((await postEvents(ctx, org.apiKey, [event(org.agentId, { at: start }), event(org.agentId, { at: start - 1000 })])).statusCode).toBe(200);
    ctx.clock.advance(20 * DAY);
    const middle = ctx.clock.now();
    expect((await postEvents(ctx, org.apiKey, [event(org.agentId, { at: middle })])).statusCode).toBe(200);
    ctx.clock.advance(13 * DAY);

    expect(await rows('telemetry_events', org.orgId, start + DAY)).toBe(2);
    const result = await ctx.container.retention.runOnce();
    expect(result.cutoff).toBe(ctx.clock.now() - 31 * DAY);
    expect(await rows('telemetry_events', org.orgId, start + DAY)).toBe(0);
    expect(await rows('telemetry_rollups', org.orgId, start + DAY)).toBe(0);
    expect(await rows('telemetry_host_rollups', org.orgId, start + DAY)).toBe(0);
    expect(await rows('telemetry_events', org.orgId, Number.MAX_SAFE_INTEGER)).toBe(1);
    const stats = await ctx.request({ method: 'GET', url: `/v1/dashboard/stats?from=${new Date(middle - DAY).toISOString()}&to=${new Date(middle + DAY).toISOString()}`, token: org.token });
    expect(stats.json().total_calls).toBe(1);
    const list = await ctx.request({ method: 'GET', url: '/v1/dashboard/events', token: org.token });
    expect(list.json().data).toHaveLength(1);

    if (dialect === 'postgres') {
      const partitions = (await ctx.container.partitions!.list()).map((p) => p.name);
      expect(partitions).not.toContain(partitionName(Math.floor(start / DAY)));
      expect(partitions).toContain(partitionName(Math.floor(middle / DAY)));
      // Partitions are made ahead, so ingestion rarely waits on DDL.
      expect(partitions).toContain(partitionName(Math.floor(ctx.clock.now() / DAY) + 2));
      expect(result.partitionsDropped).toBeGreaterThanOrEqual(1);
    } else {
      expect(result.eventsDeleted).toBeGreaterThanOrEqual(2);
    }
  });

  it('logs a failed run instead of dropping it, and the next run succeeds', async () => {
    const rename = (from: string, to: string) => sql`ALTER TABLE ${sql.table(from)} RENAME TO ${sql.table(to)}`.execute(k());
    await rename('telemetry_host_rollups', 'host_rollups_away');
    const worker = ctx.container.retention;
    try {
      await worker.start();
      await worker.stop();
    } finally {
      await rename('host_rollups_away', 'telemetry_host_rollups');
    }
    expect(ctx.log.entries).toContainEqual(expect.objectContaining({ level: 'error', obj: expect.objectContaining({ worker: 'telemetry-retention' }) }));
    await expect(worker.runOnce()).resolves.toMatchObject({ cutoff: expect.any(Number) });
  });

  it('runs on start and stops cleanly', async () => {
    const worker = ctx.container.retention;
    await worker.start();
    await worker.stop();
    const org = await newTelemetryOrg(ctx);
    expect((await postEvents(ctx, org.apiKey, [event(org.agentId, { at: ctx.clock.now() })])).statusCode).toBe(200);
  });
});
