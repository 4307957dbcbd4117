import type { SessionInfo } from '@corral/contracts';
import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyRequest } from 'fastify';
import { decodeJwt } from 'jose';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ForbiddenError } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import type { JwtClaims, JwtVerifier } from '../auth/index.js';

export const SESSION_COOKIE = 'corral_session';
export const CSRF_HEADER = 'x-csrf-token';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface SessionCookie {
  name: string;
  value: string;
  options: CookieSerializeOptions;
}

const cookieOptions = (secure: boolean): CookieSerializeOptions => ({ httpOnly: true, sameSite: 'lax', secure, path: '/' });

interface Deps {
  verifyJwt: JwtVerifier;
  /** The service's JWT secret; the CSRF key is derived from it, so every process agrees. */
  secret: string;
  clock: Clock;
}

/**
 * The dashboard's cookie session. The cookie holds the JWT itself (HttpOnly, SameSite=Lax), so
 * the session lives exactly as long as the token and needs no table. CSRF: a request that the
 * cookie authorizes and that can change something must carry X-CSRF-Token, an HMAC of the
 * session token that only a page of this origin can read (from the session endpoints).
 */
export function createSessionService({ verifyJwt, secret, clock }: Deps) {
  const csrfKey = createHmac('sha256', secret).update('corral-csrf-v1').digest();
  const csrfTokenFor = (token: string) => createHmac('sha256', csrfKey).update(token).digest('base64url');

  const cookieToken = (request: FastifyRequest): string | undefined => request.cookies?.[SESSION_COOKIE] || undefined;

  function bearerToken(request: FastifyRequest): string | undefined {
    return /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
  }

  function checkCsrf(request: FastifyRequest, token: string): void {
    if (SAFE_METHODS.has(request.method)) return;
    const given = request.headers[CSRF_HEADER];
    const expected = Buffer.from(csrfTokenFor(token));
    const actual = Buffer.from(typeof given === 'string' ? given : '');
    if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) {
      throw new ForbiddenError(`A change authorized by the session cookie needs the ${CSRF_HEADER} header from /v1/auth/session`);
    }
  }

  const expiryOf = (token: string): number | undefined => {
    const exp = decodeJwt(token).exp;
    return typeof exp === 'number' ? exp * 1000 : undefined;
  };

  function describe(token: string, claims: JwtClaims): SessionInfo {
    return {
      subject: claims.subject,
      org_id: claims.orgId,
      role: claims.role,
      expires_at: new Date(expiryOf(token) ?? clock.now()).toISOString(),
      csrf_token: csrfTokenFor(token),
    };
  }

  return {
    bearerToken,
    describe,

    /** The claims of a valid session cookie, undefined without one; unsafe methods also need CSRF. */
    async claimsFromCookie(request: FastifyRequest): Promise<JwtClaims | undefined> {
      const token = cookieToken(request);
      if (!token) return undefined;
      const claims = await verifyJwt(token);
      checkCsrf(request, token);
      return claims;
    },

    /** When the credential of this request expires. */
    expiryOf(request: FastifyRequest): number | undefined {
      const token = bearerToken(request) ?? cookieToken(request);
      return token ? expiryOf(token) : undefined;
    },

    /** The cookie to set and the session description, for a verified token. */
    start(token: string, claims: JwtClaims, secure: boolean): { cookie: SessionCookie; info: SessionInfo } {
      const expiresAt = expiryOf(token) ?? clock.now();
      const maxAge = Math.max(0, Math.floor((expiresAt - clock.now()) / 1000));
      return { cookie: { name: SESSION_COOKIE, value: token, options: { ...cookieOptions(secure), maxAge } }, info: describe(token, claims) };
    },

    /** The token that authenticated the request: a bearer token wins over the cookie, as in http/auth.ts. */
    sessionToken: (request: FastifyRequest): string | undefined => bearerToken(request) ?? cookieToken(request),

    clearCookie: (secure: boolean): SessionCookie => ({ name: SESSION_COOKIE, value: '', options: cookieOptions(secure) }),
  };
}
export type SessionService = ReturnType<typeof createSessionService>;
