import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Db } from '../../db/database.js';
import { buildSecondApp, buildTestContext, type TestContext } from '../../../test/helpers/build-test-app.js';
import { event, newTelemetryOrg, type TelemetryOrg, stampEventsWith } from '../../../test/helpers/telemetry-fixtures.js';
import { telemetryTestStores } from '../../../test/helpers/test-databases.js';

const limits = { free: 50, team: 100, enterprise: 200 };

/** Another server on the same store with small limits: what a second process would be. */
const serverOn = (ctx: TestContext, db: Db) => buildSecondApp(db, ctx.clock, { rateLimits: limits });

describe.each(telemetryTestStores)('telemetry rate limits on %s', (dialect) => {
  let ctx: TestContext;
  let app: FastifyInstance;
  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
    stampEventsWith(ctx.clock);
    app = await serverOn(ctx, ctx.testDb.db);
  });
  afterAll(async () => {
    await app.close();
    await ctx.close();
  });

  const post = (server: FastifyInstance, org: TelemetryOrg, count: number, agentId = org.agentId) =>
    server.inject({
      method: 'POST', url: '/v1/telemetry', headers: { 'x-api-key': org.apiKey },
      payload: { events: Array.from({ length: count }, () => event(agentId)) },
    });
  const total = async (org: TelemetryOrg) =>
    (await ctx.request({ method: 'GET', url: '/v1/dashboard/stats', token: org.token })).json<{ total_calls: number }>().total_calls;

  it('takes whole batches from a per-minute quota and refuses one that would pass it, with headers', async () => {
    const org = await newTelemetryOrg(ctx);
    const first = await post(app, org, 120);
    expect(first.statusCode).toBe(200);
    expect(first.headers).toMatchObject({ 'ratelimit-limit': '200', 'ratelimit-remaining': '80', 'ratelimit-reset': '36' });
    const over = await post(app, org, 81);
    expect(over.statusCode).toBe(429);
    expect(over.json().error.code).toBe('rate_limited');
    expect(Number(over.headers['retry-after'])).toBe(1);
    expect(over.headers).toMatchObject({ 'ratelimit-limit': '200', 'ratelimit-remaining': '80' });
    expect(await total(org)).toBe(120);
    expect((await post(app, org, 80)).headers['ratelimit-remaining']).toBe('0');
    expect((await post(app, org, 1)).statusCode).toBe(429);
    ctx.clock.advance(15_000);
    const later = await post(app, org, 50);
    expect(later.statusCode).toBe(200);
    expect(later.headers['ratelimit-remaining']).toBe('0');
    expect(await total(org)).toBe(250);
    ctx.clock.advance(60_000);
  });

  it('gives back the quota of a batch refused after the limit stage, and sends headers on refusals', async () => {
    const org = await newTelemetryOrg(ctx);
    const bad = await app.inject({
      method: 'POST', url: '/v1/telemetry', headers: { 'x-api-key': org.apiKey },
      payload: { events: [...Array.from({ length: 99 }, () => event(org.agentId)), event('0190a0f0-0000-7000-8000-000000000000')] },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['ratelimit-limit']).toBe('200');
    const notJson = await app.inject({ method: 'POST', url: '/v1/telemetry', headers: { 'x-api-key': org.apiKey, 'content-type': 'application/json' }, payload: '{' });
    expect(notJson.statusCode).toBe(400);
    expect(notJson.headers['ratelimit-remaining']).toBe('200');
    expect((await post(app, org, 200)).statusCode).toBe(200);
  });

  it('limits by plan and per organization, and refuses a batch larger than the whole quota', async () => {
    const a = await newTelemetryOrg(ctx);
    const b = await newTelemetryOrg(ctx);
    await ctx.container.orgService.setPlan(a.orgId, 'free');
    const tooBig = await post(app, a, 51);
    expect(tooBig.statusCode).toBe(429);
    expect(tooBig.headers['ratelimit-limit']).toBe('50');
    expect(tooBig.json().error.message).toMatch(/smaller batches/);
    expect((await post(app, a, 50)).statusCode).toBe(200);
    expect((await post(app, a, 1)).statusCode).toBe(429);
    expect((await post(app, b, 200)).statusCode).toBe(200);
  });

  it('lets exactly the batches that fit through when they race', async () => {
    const org = await newTelemetryOrg(ctx);
    const results = await Promise.all(Array.from({ length: 8 }, () => post(app, org, 40)));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(5);
    expect(results.filter((r) => r.statusCode === 429)).toHaveLength(3);
    expect(await total(org)).toBe(200);
  });

  // Only PostgreSQL is shared by several processes; the embedded store has one.
  if (dialect === 'postgres') it('holds across processes that share PostgreSQL', async () => {
    const pgInfo = ctx.testDb.pg!;
    const secondDb = createDatabase({ databaseUrl: pgInfo.url, pgSchema: pgInfo.schema, poolSize: 3 });
    const second = await serverOn(ctx, secondDb);
    try {
      const org = await newTelemetryOrg(ctx);
      expect((await post(app, org, 150)).statusCode).toBe(200);
      const elsewhere = await post(second, org, 60);
      expect(elsewhere.statusCode).toBe(429);
      expect(elsewhere.headers['ratelimit-remaining']).toBe('50');
      const racing = await Promise.all([post(app, org, 30), post(second, org, 30)]);
      expect(racing.map((r) => r.statusCode).sort()).toEqual([200, 429]);
      expect(await total(org)).toBe(180);
    } finally {
      await second.close();
      await secondDb.close();
    }
  });

  // Every request of an organization updates its one row; a logged commit would make each wait
  // for the previous one's WAL flush (migration 0004).
  if (dialect === 'postgres') it('keeps the shared state in an unlogged table, so no request waits on a WAL flush for it', async () => {
    const { rows } = await sql<{ persistence: string }>`
      SELECT relpersistence AS persistence FROM pg_class WHERE oid = 'rate_limit_state'::regclass`.execute(ctx.testDb.db.kysely);
    expect(rows).toEqual([{ persistence: 'u' }]);
  });
});
