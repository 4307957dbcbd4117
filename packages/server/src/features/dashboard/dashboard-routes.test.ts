import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from '../../../test/helpers/build-test-app.js';
import {
  event, exactQuantile, newAgent, newTelemetryOrg, postEvents, stampEventsWith, type TelemetryOrg, withinPercent,
} from '../../../test/helpers/telemetry-fixtures.js';
import { telemetryTestStores } from '../../../test/helpers/test-databases.js';

const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

function lcg(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

describe.each(telemetryTestStores)('dashboard on %s', (dialect) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
    stampEventsWith(ctx.clock);
  });
  afterAll(() => ctx.close());

  const get = async <T = unknown>(org: TelemetryOrg, url: string) => {
    const res = await ctx.request({ method: 'GET', url, token: org.token });
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
    return res.json<T>();
  };
  const send = async (org: TelemetryOrg, events: unknown[]) => {
    for (let i = 0; i < events.length; i += 1000) {
      const res = await postEvents(ctx, org.apiKey, events.slice(i, i + 1000));
      expect(res.statusCode, res.body).toBe(200);
    }
  };
  const iso = (ms: number) => new Date(ms).toISOString();

  describe('aggregates', () => {
    let org: TelemetryOrg;
    let second: string;
    const latencies = new Map<string, number[]>();
    const now = () => ctx.clock.now();

    beforeAll(async () => {
      org = await newTelemetryOrg(ctx);
      second = await newAgent(ctx, org.token, 'second agent');
      latencies.set(org.agentId, []);
      latencies.set(second, []);
      const random = lcg(11);
      const events = [];
      for (let i = 0; i < 3000; i++) {
        const agentId = i % 3 === 0 ? second : org.agentId;
        const latency = Math.max(1, Math.round(Math.exp(2 + 3 * random() * random() + random())));
        const result = i % 10 === 0 ? 'error' : 'allowed';
        latencies.get(agentId)!.push(latency);
        // Spread over the last 20 hours so minute and hour rollups both answer.
        events.push(event(agentId, { at: now() - Math.floor(random() * 20 * HOUR), latency_ms: latency, policy_result: result, url_host: `h${i % 3}.example.com` }));
      }
      for (let i = 0; i < 40; i++) {
        events.push(event(org.agentId, { at: now() - i * MIN, policy_result: 'denied', deny_reason: i % 4 === 0 ? 'rule-b' : 'rule-a', url_host: 'h0.example.com' }));
      }
      events.push(event(org.agentId, { at: now() - 5 * MIN, policy_result: 'allowed', deny_reason: 'rule-a', latency_ms: null }));
      await send(org, events);
    });

    it('stats: exact counts, exact average, percentiles within 2% of exact', async () => {
      const all = [...latencies.values()].flat();
      const stats = await get<Record<string, number>>(org, '/v1/dashboard/stats');
      expect(stats).toMatchObject({ total_calls: 3041, allowed_calls: 2701, denied_calls: 40, error_calls: 300, active_agents: 2, total_agents: 2 });
      expect(stats.avg_latency_ms).toBeCloseTo(all.reduce((a, b) => a + b, 0) / all.length, 2);
      for (const [field, q] of [['p50_latency_ms', 0.5], ['p95_latency_ms', 0.95], ['p99_latency_ms', 0.99]] as const) {
        expect(withinPercent(stats[field]!, exactQuantile(all, q), 2), `${field}: ${stats[field]} vs ${exactQuantile(all, q)}`).toBe(true);
      }
    });

    it('agents: per-agent counts and percentiles, every live agent listed', async () => {
      const quiet = await newAgent(ctx, org.token, 'quiet agent');
      const items = await get<Array<Record<string, number | string>>>(org, '/v1/dashboard/agents');
      expect(items.map((a) => a.agent_id)).toEqual([org.agentId, second, quiet]);
      expect(items[2]).toMatchObject({ agent_name: 'quiet agent', total_calls: 0, p50_latency_ms: 0 });
      for (const item of items.slice(0, 2)) {
        const values = latencies.get(item.agent_id as string)!;
        expect(item.total_calls).toBe(values.length + (item.agent_id === org.agentId ? 41 : 0));
        expect(withinPercent(item.p50_latency_ms as number, exactQuantile(values, 0.5), 2)).toBe(true);
        expect(withinPercent(item.p95_latency_ms as number, exactQuantile(values, 0.95), 2)).toBe(true);
      }
      expect(items[1]).toMatchObject({ agent_name: 'second agent', denied_calls: 0, error_calls: 100 });
      await ctx.request({ method: 'DELETE', url: `/v1/agents/${quiet}`, token: org.token });
    });

    it('hosts: most called first, with the limit', async () => {
      const hosts = await get<Array<Record<string, unknown>>>(org, '/v1/dashboard/hosts?limit=2');
      expect(hosts).toEqual([
        { url_host: 'h0.example.com', call_count: 1040, allowed_count: 900, denied_count: 40, error_count: 100 },
        { url_host: 'h1.example.com', call_count: 1000, allowed_count: 900, denied_count: 0, error_count: 100 },
      ]);
      expect(await get<unknown[]>(org, '/v1/dashboard/hosts')).toHaveLength(4);
      expect((await ctx.request({ method: 'GET', url: '/v1/dashboard/hosts?limit=51', token: org.token })).statusCode).toBe(400);
    });

    it('rule hits: denied and dry-run matches per rule, most hits first', async () => {
      expect(await get(org, '/v1/dashboard/rule-hits')).toEqual([
        { rule_name: 'rule-a', total: 31, denied: 30, dry_run: 1 },
        { rule_name: 'rule-b', total: 10, denied: 10, dry_run: 0 },
      ]);
    });

    it('hosts and rule hits of one agent, which add up to the organization\'s; another organization\'s agent has none', async () => {
      expect(await get(org, `/v1/dashboard/hosts?agent_id=${second}`)).toEqual([
        { url_host: 'h0.example.com', call_count: 1000, allowed_count: 900, denied_count: 0, error_count: 100 },
      ]);
      const mine = await get<Array<{ url_host: string; call_count: number }>>(org, `/v1/dashboard/hosts?agent_id=${org.agentId.toUpperCase()}&limit=3`);
      expect(mine).toEqual([
        { url_host: 'h1.example.com', call_count: 1000, allowed_count: 900, denied_count: 0, error_count: 100 },
        { url_host: 'h2.example.com', call_count: 1000, allowed_count: 900, denied_count: 0, error_count: 100 },
        { url_host: 'h0.example.com', call_count: 40, allowed_count: 0, denied_count: 40, error_count: 0 },
      ]);
      // Per agent, every host: the sums are the organization's rollups.
      const total = new Map<string, number>();
      for (const agent of [org.agentId, second]) {
        for (const h of await get<Array<{ url_host: string; call_count: number }>>(org, `/v1/dashboard/hosts?agent_id=${agent}&limit=50`)) {
          total.set(h.url_host, (total.get(h.url_host) ?? 0) + h.call_count);
        }
      }
      const orgHosts = await get<Array<{ url_host: string; call_count: number }>>(org, '/v1/dashboard/hosts?limit=50');
      expect(Object.fromEntries(total)).toEqual(Object.fromEntries(orgHosts.map((h) => [h.url_host, h.call_count])));

      expect(await get(org, `/v1/dashboard/rule-hits?agent_id=${org.agentId}`)).toEqual(await get(org, '/v1/dashboard/rule-hits'));
      expect(await get(org, `/v1/dashboard/rule-hits?agent_id=${second}`)).toEqual([]);
      // The window applies: the denied calls were all in the last 40 minutes.
      expect(await get(org, `/v1/dashboard/rule-hits?agent_id=${org.agentId}&to=${iso(now() - HOUR)}`)).toEqual([]);

      const other = await newTelemetryOrg(ctx);
      expect(await get(other, `/v1/dashboard/hosts?agent_id=${org.agentId}`)).toEqual([]);
      expect(await get(other, `/v1/dashboard/rule-hits?agent_id=${org.agentId}`)).toEqual([]);
      expect((await ctx.request({ method: 'GET', url: '/v1/dashboard/hosts?agent_id=nope', token: org.token })).statusCode).toBe(400);
    });

    it('reads rollups: the answers stay when raw events are gone', async () => {
      const before = await get(org, '/v1/dashboard/stats');
      await ctx.testDb.db.kysely.deleteFrom('telemetry_events').where('org_id', '=', org.orgId).execute();
      expect(await get(org, '/v1/dashboard/stats')).toEqual(before);
    });
  });

  describe('windows and time series', () => {
    it('zero-fills buckets of the contract widths and puts events in theirs', async () => {
      const org = await newTelemetryOrg(ctx);
      const t0 = Math.floor(ctx.clock.now() / DAY) * DAY - 2 * DAY;
      await send(org, [
        event(org.agentId, { at: t0 + 5 * MIN + 1000 }), event(org.agentId, { at: t0 + 5 * MIN + 59_000 }),
        event(org.agentId, { at: t0 + 30 * MIN, policy_result: 'denied' }), event(org.agentId, { at: t0 + 13 * HOUR, policy_result: 'error' }),
      ]);
      const hour = await get<Array<Record<string, unknown>>>(org, `/v1/dashboard/timeseries?from=${iso(t0)}&to=${iso(t0 + HOUR)}`);
      expect(hour).toHaveLength(60);
      expect(hour[0]).toEqual({ bucket: iso(t0), total: 0, allowed: 0, denied: 0, error: 0 });
      expect(hour[5]).toEqual({ bucket: iso(t0 + 5 * MIN), total: 2, allowed: 2, denied: 0, error: 0 });
      expect(hour[30]).toMatchObject({ total: 1, denied: 1 });
      const day = await get<Array<{ bucket: string; total: number }>>(org, `/v1/dashboard/timeseries?from=${iso(t0)}&to=${iso(t0 + DAY)}`);
      expect(day).toHaveLength(96);
      expect(Date.parse(day[1]!.bucket) - Date.parse(day[0]!.bucket)).toBe(15 * MIN);
      expect(day.map((b) => b.total)).toEqual(day.map((_, i) => (i === 0 ? 2 : i === 2 ? 1 : i === 52 ? 1 : 0)));
      const month = await get<Array<{ bucket: string; total: number; error: number }>>(org, `/v1/dashboard/timeseries?from=${iso(t0 - 29 * DAY)}&to=${iso(t0 + 2 * DAY)}`);
      expect(month).toHaveLength(62);
      expect(Date.parse(month[1]!.bucket) - Date.parse(month[0]!.bucket)).toBe(12 * HOUR);
      expect(month.reduce((a, b) => a + b.total, 0)).toBe(4);
      expect(month[58]).toMatchObject({ total: 3, denied: 1 });
      expect(month[59]).toMatchObject({ total: 1, error: 1 });
      const short = await get<unknown[]>(org, `/v1/dashboard/timeseries?from=${iso(t0)}&to=${iso(t0 + 10 * MIN)}`);
      expect(short).toHaveLength(10);
    });

    it('counts a 30-day window exactly across day, hour and minute rollups', async () => {
      const org = await newTelemetryOrg(ctx);
      const now = ctx.clock.now();
      const events = Array.from({ length: 600 }, (_, i) => event(org.agentId, { at: now - Math.floor((i / 600) * 29.9 * DAY), latency_ms: 10 + (i % 50) }));
      await send(org, events);
      const stats = await get<Record<string, number>>(org, `/v1/dashboard/stats?from=${iso(now - 30 * DAY)}`);
      expect(stats.total_calls).toBe(600);
      const lat = events.map((e) => e.latency_ms as number);
      expect(withinPercent(stats.p95_latency_ms!, exactQuantile(lat, 0.95), 2)).toBe(true);
      const lastDay = events.filter((e) => Date.parse(e.timestamp) >= Math.floor((now - DAY) / MIN) * MIN).length;
      expect((await get<Record<string, number>>(org, '/v1/dashboard/stats')).total_calls).toBe(lastDay);
    });

    it('defaults to the last 24 hours and refuses windows over 31 days or reversed', async () => {
      const org = await newTelemetryOrg(ctx);
      const now = ctx.clock.now();
      await send(org, [event(org.agentId, { at: now - 25 * HOUR }), event(org.agentId, { at: now - HOUR })]);
      expect((await get<Record<string, number>>(org, '/v1/dashboard/stats')).total_calls).toBe(1);
      expect((await get<Record<string, number>>(org, `/v1/dashboard/stats?from=${iso(now - 26 * HOUR)}`)).total_calls).toBe(2);
      expect((await get<Record<string, number>>(org, `/v1/dashboard/stats?to=${iso(now - 2 * HOUR)}&from=${iso(now - 30 * HOUR)}`)).total_calls).toBe(1);
      for (const path of ['stats', 'agents', 'hosts', 'timeseries', 'rule-hits']) {
        const wide = await ctx.request({ method: 'GET', url: `/v1/dashboard/${path}?from=${iso(now - 32 * DAY)}&to=${iso(now)}`, token: org.token });
        expect(wide.statusCode, path).toBe(400);
        expect(wide.json().error.code).toBe('invalid_value');
        const reversed = await ctx.request({ method: 'GET', url: `/v1/dashboard/${path}?from=${iso(now)}&to=${iso(now - HOUR)}`, token: org.token });
        expect(reversed.statusCode, path).toBe(400);
        const notADate = await ctx.request({ method: 'GET', url: `/v1/dashboard/${path}?from=yesterday`, token: org.token });
        expect(notADate.statusCode, path).toBe(400);
      }
      const exact31 = await ctx.request({ method: 'GET', url: `/v1/dashboard/stats?from=${iso(now - 31 * DAY)}&to=${iso(now)}`, token: org.token });
      expect(exact31.statusCode).toBe(200);
    });
  });
});
