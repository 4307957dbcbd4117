import {
  Alert, AlertHistoryRecord, AlertNotification, AlertWithSecret, CreateAlertBody, IdParams, MuteAlertBody, Page, PageQuery, Success, ToggleAlertBody,
  UpdateAlertBody,
} from '@corral/contracts';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { parseIdCursor } from '../../lib/cursor.js';
import type { AlertService } from './alert-service.js';

const AlertParams = IdParams('alert_id');
const tags = ['alerts'];
const read = { resource: 'alerts', access: 'read' } as const;
const write = { resource: 'alerts', access: 'write' } as const;
const secretNote = 'A webhook rule answers with its signing secret (`webhook_secret`) here only; keep it.';

export const alertRoutes: FastifyPluginAsyncTypebox<{ alertService: AlertService }> = async (app, { alertService: s }) => {
  app.post(
    '/v1/alerts',
    {
      config: { auth: { user: 'member', key: write } },
      schema: { tags, summary: 'Create an alert rule', description: `${secretNote} An \`action\` takes an admin (JWT).`, body: CreateAlertBody, response: { 200: AlertWithSecret } },
    },
    async (request) => s.create(principalOf(request), request.body),
  );

  app.get(
    '/v1/alerts',
    {
      config: { auth: { user: 'viewer', key: read } },
      schema: { tags, summary: "List alert rules, newest first, each with its agent's name", querystring: PageQuery(20, 100), response: { 200: Page(Alert) } },
    },
    async (request) => s.list(principalOf(request).orgId, request.query.limit, parseIdCursor(request.query.cursor)),
  );

  app.get(
    '/v1/alerts/:alert_id',
    {
      config: { auth: { user: 'viewer', key: read } },
      schema: { tags, summary: 'Get an alert rule', params: AlertParams, response: { 200: Alert } },
    },
    async (request) => s.get(principalOf(request).orgId, request.params.alert_id),
  );

  app.put(
    '/v1/alerts/:alert_id',
    {
      config: { auth: { user: 'member', key: write } },
      schema: {
        tags, summary: 'Update an alert rule; omitted fields keep their values',
        description: `A rule moved to the webhook channel gets a new secret. ${secretNote}`,
        params: AlertParams, body: UpdateAlertBody, response: { 200: AlertWithSecret },
      },
    },
    async (request) => s.update(principalOf(request), request.params.alert_id, request.body),
  );

  app.delete(
    '/v1/alerts/:alert_id',
    {
      config: { auth: { user: 'admin', key: write } },
      schema: { tags, summary: 'Delete an alert rule with its history and notifications', params: AlertParams, response: { 200: Success } },
    },
    async (request) => {
      await s.delete(principalOf(request), request.params.alert_id);
      return { success: true as const };
    },
  );

  app.post(
    '/v1/alerts/:alert_id/toggle',
    {
      config: { auth: { user: 'member', key: write } },
      schema: { tags, summary: 'Enable or disable an alert rule', params: AlertParams, body: ToggleAlertBody, response: { 200: Alert } },
    },
    async (request) => s.toggle(principalOf(request), request.params.alert_id, request.body.is_enabled),
  );

  app.post(
    '/v1/alerts/:alert_id/mute',
    {
      config: { auth: { user: 'member', key: write } },
      schema: {
        tags, summary: 'Mute notifications until a time', description: 'The rule keeps evaluating and recording transitions; no email or webhook is sent until `until`. The reason goes to the audit log.',
        params: AlertParams, body: MuteAlertBody, response: { 200: Alert },
      },
    },
    async (request) => s.mute(principalOf(request), request.params.alert_id, request.body.until, request.body.reason),
  );

  app.post(
    '/v1/alerts/:alert_id/unmute',
    {
      config: { auth: { user: 'member', key: write } },
      schema: { tags, summary: 'Clear a mute; the next transition notifies', params: AlertParams, response: { 200: Alert } },
    },
    async (request) => s.unmute(principalOf(request), request.params.alert_id),
  );

  app.post(
    '/v1/alerts/:alert_id/rotate-secret',
    {
      config: { auth: { user: 'member', key: write } },
      schema: {
        tags, summary: "Rotate a webhook rule's signing secret",
        description: `${secretNote} The previous secret keeps signing beside the new one for 24 hours.`,
        params: AlertParams, response: { 200: AlertWithSecret },
      },
    },
    async (request) => s.rotateSecret(principalOf(request), request.params.alert_id),
  );

  app.post(
    '/v1/alerts/:alert_id/test',
    {
      config: { auth: { user: 'member', key: write } },
      schema: {
        tags, summary: "Send a test notification to the rule's channel now",
        description: 'One attempt, whatever the mute, cooldown or state; the answer says how it went, and the notification list keeps it.',
        params: AlertParams, response: { 200: AlertNotification },
      },
    },
    async (request) => s.sendTest(principalOf(request), request.params.alert_id),
  );

  app.get(
    '/v1/alerts/:alert_id/history',
    {
      config: { auth: { user: 'viewer', key: read } },
      schema: { tags, summary: 'Firing and resolved transitions, newest first', params: AlertParams, querystring: PageQuery(50, 200), response: { 200: Page(AlertHistoryRecord) } },
    },
    async (request) => s.history(principalOf(request).orgId, request.params.alert_id, request.query.limit, parseIdCursor(request.query.cursor)),
  );

  app.get(
    '/v1/alerts/:alert_id/notifications',
    {
      config: { auth: { user: 'viewer', key: read } },
      schema: { tags, summary: 'Notifications and every delivery attempt, newest first', params: AlertParams, querystring: PageQuery(50, 200), response: { 200: Page(AlertNotification) } },
    },
    async (request) => s.notifications(principalOf(request).orgId, request.params.alert_id, request.query.limit, parseIdCursor(request.query.cursor)),
  );
};
