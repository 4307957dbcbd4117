import { SessionInfo, Success } from '@corral/contracts';
import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { UnauthorizedError } from '../../errors.js';
import { bearerToken, SESSION_COOKIE, sessionToken } from '../../http/auth.js';
import type { JwtVerifier } from '../auth/index.js';
import type { SessionService } from './session-service.js';

const tags = ['auth'];

const cookieOptions = (request: FastifyRequest): CookieSerializeOptions => ({
  httpOnly: true,
  sameSite: 'lax',
  secure: request.protocol === 'https',
  path: '/',
});

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
      const token = bearerToken(request);
      if (!token) throw new UnauthorizedError('Send the JWT as Authorization: Bearer <token> to start a session');
      const claims = await verifyJwt(token);
      void reply
        .setCookie(SESSION_COOKIE, token, { ...cookieOptions(request), maxAge: sessionService.secondsLeft(claims) })
        .header('cache-control', 'no-store');
      return sessionService.describe(token, claims);
    },
  );

  app.get(
    '/v1/auth/session',
    {
      config: { auth: { user: 'viewer' } },
      schema: { tags, summary: 'The current session and its CSRF token', response: { 200: SessionInfo } },
    },
    async (request, reply) => {
      const token = sessionToken(request);
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
      void reply.clearCookie(SESSION_COOKIE, cookieOptions(request));
      return { success: true as const };
    },
  );
};
