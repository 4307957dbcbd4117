import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext, type TestContext } from './helpers/build-test-app.js';
import { event, newTelemetryOrg, postEvents, stampEventsWith, type TelemetryOrg } from './helpers/telemetry-fixtures.js';
import { testDialects } from './helpers/test-databases.js';

/**
 * What every route shares at the edge, before any handler runs: how a validation failure reads,
 * which body formats are read, and how ids are spelled.
 */
describe.each(testDialects)('the request edge on %s', (dialect) => {
  let ctx: TestContext;
  let org: TelemetryOrg;
  beforeAll(async () => {
    ctx = await buildTestContext(dialect);
    stampEventsWith(ctx.clock);
    org = await newTelemetryOrg(ctx);
  });
  afterAll(() => ctx.close());

  describe('validation messages', () => {
    it('names the field and its allowed values once', async () => {
      const res = await postEvents(ctx, org.apiKey, [event(org.agentId, { policy_result: 'maybe' as 'allowed' })]);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({
        code: 'invalid_value',
        message: 'events.0.policy_result must be one of allowed, denied, error',
        details: [{ field: 'events.0.policy_result', message: 'must be one of allowed, denied, error' }],
        request_id: res.headers['x-request-id'],
      });
    });

    it('says what a union of types takes, or what is wrong in the branch the value fitted', async () => {
      const wrongType = await postEvents(ctx, org.apiKey, [event(org.agentId, { status_code: 'x' as unknown as number })]);
      expect(wrongType.json().error.details).toEqual([{ field: 'events.0.status_code', message: 'must be an integer or null' }]);
      const tooBig = await postEvents(ctx, org.apiKey, [event(org.agentId, { status_code: 600 })]);
      expect(tooBig.json().error.details).toEqual([{ field: 'events.0.status_code', message: 'must be <= 599' }]);
      for (const res of [wrongType, tooBig]) expect(res.body).not.toMatch(/anyOf|must match a schema/);
    });

    it('keeps to 20 details, one per field', async () => {
      const bad = Array.from({ length: 30 }, () => event(org.agentId, { policy_result: 'maybe' as 'allowed' }));
      const details = (await postEvents(ctx, org.apiKey, bad)).json().error.details as Array<{ field: string }>;
      expect(details).toHaveLength(20);
      expect(new Set(details.map((d) => d.field)).size).toBe(20);
    });

    it('names a missing field and an unknown value in a query', async () => {
      const res = await ctx.request({ method: 'POST', url: '/v1/agents', token: org.token, payload: { description: 'no name' } });
      expect(res.json().error.details).toEqual([{ field: 'name', message: 'is required' }]);
      const query = await ctx.request({ method: 'GET', url: '/v1/dashboard/events?policy_result=maybe', token: org.token });
      expect(query.json().error.details).toEqual([{ field: 'querystring.policy_result', message: 'must be one of allowed, denied, error' }]);
    });
  });

  describe('body formats', () => {
    it('answers a text/plain body with 415, like any other format an endpoint does not read', async () => {
      for (const contentType of ['text/plain', 'text/plain; charset=utf-8', 'application/xml']) {
        const res = await ctx.request({
          method: 'POST', url: '/v1/agents', token: org.token, headers: { 'content-type': contentType }, payload: JSON.stringify({ name: 'text' }),
        });
        expect(res.statusCode, contentType).toBe(415);
        expect(res.json().error, contentType).toMatchObject({ code: 'unsupported_media_type' });
      }
      const ingest = await postEvents(ctx, org.apiKey, [], { host: 'ingest', headers: { 'content-type': 'text/plain' }, raw: JSON.stringify({ events: [event(org.agentId)] }) });
      expect(ingest.statusCode).toBe(415);
      const agents = (await ctx.request({ method: 'GET', url: '/v1/agents', token: org.token })).json().data as Array<{ name: string }>;
      expect(agents.map((a) => a.name)).not.toContain('text');
    });
  });

  describe('UUID spelling', () => {
    it('accepts upper-case UUIDs in paths and reads them as the lower-case id', async () => {
      const upper = org.agentId.toUpperCase();
      const got = await ctx.request({ method: 'GET', url: `/v1/agents/${upper}`, token: org.token });
      expect(got.statusCode).toBe(200);
      expect(got.json().id).toBe(org.agentId);
      const renamed = await ctx.request({ method: 'PUT', url: `/v1/agents/${upper}`, token: org.token, payload: { description: 'by upper case' } });
      expect(renamed.json()).toMatchObject({ id: org.agentId, description: 'by upper case' });
      const mixed = `${org.agentId.slice(0, 18).toUpperCase()}${org.agentId.slice(18)}`;
      const created = await ctx.request({ method: 'POST', url: `/v1/agents/${mixed}/policies`, token: org.token, payload: { policy: { default: 'allow' } } });
      expect(created.json()).toMatchObject({ agent_id: org.agentId, version: 1 });
      expect((await ctx.request({ method: 'GET', url: `/v1/agents/${upper}/policies/1`, token: org.token })).json().agent_id).toBe(org.agentId);
    });

    it('accepts upper-case UUIDs in bodies and queries, storing and matching them lower-case', async () => {
      const sent = event(org.agentId.toUpperCase());
      expect((await postEvents(ctx, org.apiKey, [sent])).statusCode).toBe(200);
      const stored = await ctx.request({ method: 'GET', url: `/v1/dashboard/events/${sent.request_id}`, token: org.token });
      expect(stored.json().agent_id).toBe(org.agentId);
      const filtered = await ctx.request({ method: 'GET', url: `/v1/dashboard/events?agent_id=${org.agentId.toUpperCase()}`, token: org.token });
      expect(filtered.statusCode).toBe(200);
      expect((filtered.json().data as Array<{ request_id: string }>).map((e) => e.request_id)).toContain(sent.request_id);
    });

    it('still refuses what is not a UUID in either case', async () => {
      for (const bad of ['NOT-A-UUID', `${org.agentId.toUpperCase()}0`, 'G'.repeat(8) + org.agentId.slice(8)]) {
        const res = await ctx.request({ method: 'GET', url: `/v1/agents/${bad}`, token: org.token });
        expect(res.statusCode, bad).toBe(400);
        expect(res.json().error, bad).toMatchObject({ code: 'invalid_value', details: [{ field: 'params.agent_id' }] });
      }
    });
  });
});
