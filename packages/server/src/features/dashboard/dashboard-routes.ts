import {
  AgentStatsItem, DashboardEvent, ModelUsageItem, DashboardEventsQuery, DashboardHostsQuery, DashboardRuleHitsQuery, DashboardStats, DashboardWindowQuery, Page, RequestIdParams,
  RuleHit, TimeseriesBucket, TopHostItem,
} from '@corral/contracts';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import type { DashboardService } from './dashboard-service.js';

const tags = ['dashboard'];
const auth = { user: 'viewer', key: { resource: 'events', access: 'read' } } as const;
const windowNote = '`to` defaults to now and `from` to 24 hours before `to`; the window may not exceed 31 days.';
const agentNote = ' `agent_id` narrows it to one agent, counted from its stored events; another organization\'s agent, like an unknown one, has none.';

export const dashboardRoutes: FastifyPluginAsyncTypebox<{ dashboardService: DashboardService }> = async (app, { dashboardService: s }) => {
  app.get(
    '/v1/dashboard/stats',
    { config: { auth }, schema: { tags, summary: 'Call counts and latency over a window', description: windowNote, querystring: DashboardWindowQuery, response: { 200: DashboardStats } } },
    async (request) => s.stats(principalOf(request).orgId, request.query),
  );

  app.get(
    '/v1/dashboard/agents',
    { config: { auth }, schema: { tags, summary: 'Per-agent call counts and latency', description: windowNote, querystring: DashboardWindowQuery, response: { 200: Type.Array(AgentStatsItem) } } },
    async (request) => s.agents(principalOf(request).orgId, request.query),
  );

  app.get(
    '/v1/dashboard/models',
    {
      config: { auth },
      schema: {
        tags, summary: 'GenAI calls, tokens and cost per provider and model',
        description: `${windowNote} cost_usd comes from the price table (built-in or CORRAL_PRICES_FILE); null when a call of the model has no price. See docs/otlp.md.`,
        querystring: DashboardWindowQuery, response: { 200: Type.Array(ModelUsageItem) },
      },
    },
    async (request) => s.models(principalOf(request).orgId, request.query),
  );

  app.get(
    '/v1/dashboard/hosts',
    { config: { auth }, schema: { tags, summary: 'Most-called hosts', description: windowNote + agentNote, querystring: DashboardHostsQuery, response: { 200: Type.Array(TopHostItem) } } },
    async (request) => s.hosts(principalOf(request).orgId, request.query),
  );

  app.get(
    '/v1/dashboard/timeseries',
    {
      config: { auth },
      schema: {
        tags, summary: 'Zero-filled call counts per bucket',
        description: `${windowNote} The bucket width (1m, 5m, 15m, 30m, 1h, 3h, 6h, 12h or 1d) is the narrowest giving at most 120 buckets.`,
        querystring: DashboardWindowQuery, response: { 200: Type.Array(TimeseriesBucket) },
      },
    },
    async (request) => s.timeseries(principalOf(request).orgId, request.query),
  );

  app.get(
    '/v1/dashboard/rule-hits',
    { config: { auth }, schema: { tags, summary: 'Most-matched policy rules (by deny_reason)', description: windowNote + agentNote, querystring: DashboardRuleHitsQuery, response: { 200: Type.Array(RuleHit) } } },
    async (request) => s.ruleHits(principalOf(request).orgId, request.query),
  );

  app.get(
    '/v1/dashboard/events',
    { config: { auth }, schema: { tags, summary: 'Stored events, newest first', querystring: DashboardEventsQuery, response: { 200: Page(DashboardEvent) } } },
    async (request) => s.events(principalOf(request).orgId, request.query),
  );

  app.get(
    '/v1/dashboard/events/:request_id',
    { config: { auth }, schema: { tags, summary: 'One stored event by its request_id', params: RequestIdParams, response: { 200: DashboardEvent } } },
    async (request) => s.event(principalOf(request).orgId, request.params.request_id),
  );
};
