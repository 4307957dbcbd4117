import type { SessionInfo } from '@corral/contracts';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { SessionCredentials } from '../../domain/principal.js';
import { ForbiddenError } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import type { JwtClaims, JwtVerifier } from '../auth/index.js';

interface Deps {
  verifyJwt: JwtVerifier;
  /** The service's JWT secret; the CSRF key is derived from it, so every process agrees. */
  secret: string;
  clock: Clock;
}

/**
 * The dashboard's cookie session. The cookie holds the JWT itself (session-routes.ts sets it
 * HttpOnly, SameSite=Lax), so the session lives exactly as long as the token and needs no table.
 * CSRF: a request that the cookie authorizes and that can change something must carry
 * X-CSRF-Token, an HMAC of the session token that only a page of this origin can read (from the
 * session endpoints).
 */
export function createSessionService({ verifyJwt, secret, clock }: Deps) {
  const csrfKey = createHmac('sha256', secret).update('corral-csrf-v1').digest();
  const csrfTokenFor = (token: string) => createHmac('sha256', csrfKey).update(token).digest('base64url');

  function checkCsrf(token: string, given: string | undefined): void {
    const expected = Buffer.from(csrfTokenFor(token));
    const actual = Buffer.from(given ?? '');
    if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) {
      throw new ForbiddenError('A change authorized by the session cookie needs the x-csrf-token header from /v1/auth/session');
    }
  }

  return {
    /** The claims of a valid session; a request that may change something also needs its CSRF token. */
    async verify(session: SessionCredentials): Promise<JwtClaims> {
      const claims = await verifyJwt(session.token);
      if (session.isUnsafe) checkCsrf(session.token, session.csrfToken);
      return claims;
    },

    /** What the session endpoints answer for a verified token. */
    describe(token: string, claims: JwtClaims): SessionInfo {
      return {
        subject: claims.subject,
        org_id: claims.orgId,
        role: claims.role,
        expires_at: new Date(claims.expiresAt ?? clock.now()).toISOString(),
        csrf_token: csrfTokenFor(token),
      };
    },

    /** Seconds the session has left: the cookie's Max-Age. */
    secondsLeft: (claims: JwtClaims): number => Math.max(0, Math.floor(((claims.expiresAt ?? clock.now()) - clock.now()) / 1000)),
  };
}
export type SessionService = ReturnType<typeof createSessionService>;
