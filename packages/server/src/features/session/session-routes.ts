import { SessionInfo, Success } from '@corral/contracts';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { UnauthorizedError } from '../../errors.js';
import type { JwtVerifier } from '../auth/index.js';
import type { SessionService } from './session-service.js';

const tags = ['auth'];

export const sessionRoutes: FastifyPluginAsyncTypebox<{ sessionService: SessionService; verifyJwt: JwtVerifier }> = async (
  app,
  { sessionService, verifyJwt },
) => {
  app.post(
    '/v1/auth/session',
    {
      config: { auth: { user: 'viewer' } },
      schema: {
        tags,
        summary: 'Start a cookie session for the dashboard from a Bearer JWT',
        description: 'Sets the HttpOnly cookie corral_session. Mutations authorized by the cookie must send X-CSRF-Token: csrf_token.',
        response: { 200: SessionInfo },
      },
    },
    async (request, reply) => {
      const token = sessionService.bearerToken(request);
      if (!token) throw new UnauthorizedError('Send the JWT as Authorization: Bearer <token> to start a session');
      const { cookie, info } = sessionService.start(token, await verifyJwt(token), request.protocol === 'https');
      void reply.setCookie(cookie.name, cookie.value, cookie.options).header('cache-control', 'no-store');
      return info;
    },
  );

  app.get(
    '/v1/auth/session',
    {
      config: { auth: { user: 'viewer' } },
      schema: { tags, summary: 'The current session and its CSRF token', response: { 200: SessionInfo } },
    },
    async (request, reply) => {
      const token = sessionService.sessionToken(request);
      if (!token) throw new UnauthorizedError();
      void reply.header('cache-control', 'no-store');
      return sessionService.describe(token, await verifyJwt(token));
    },
  );

  app.delete(
    '/v1/auth/session',
    {
      // Ending a session needs no credentials: clearing a cookie reveals and changes nothing else.
      config: { auth: { public: true } },
      schema: { tags, summary: 'End the cookie session', response: { 200: Success } },
    },
    async (request, reply) => {
      const cookie = sessionService.clearCookie(request.protocol === 'https');
      void reply.clearCookie(cookie.name, cookie.options);
      return { success: true as const };
    },
  );
};
