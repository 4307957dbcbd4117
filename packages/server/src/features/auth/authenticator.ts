import type { FastifyRequest } from 'fastify';
import type { Authenticator } from '../../http/auth.js';
import type { ApiKeyService } from '../api-keys/index.js';
import type { OrgService } from '../orgs/index.js';
import type { JwtClaims, JwtVerifier } from './jwt.js';

interface Deps {
  verifyJwt: JwtVerifier;
  apiKeyService: Pick<ApiKeyService, 'authenticate'>;
  orgService: Pick<OrgService, 'ensure'>;
  /** The dashboard's cookie session; it also enforces CSRF on unsafe methods. */
  cookieSession?: { claimsFromCookie(request: FastifyRequest): Promise<JwtClaims | undefined> };
}

export function createAuthenticator({ verifyJwt, apiKeyService, orgService, cookieSession }: Deps): Authenticator {
  return {
    async authenticateBearer(token) {
      const claims = await verifyJwt(token);
      // An organization is created on the first valid JWT that names it (contract section 2).
      await orgService.ensure(claims.orgId);
      return { kind: 'user', orgId: claims.orgId, subject: claims.subject, role: claims.role };
    },
    authenticateApiKey: (key) => apiKeyService.authenticate(key),
    ...(cookieSession
      ? {
          async authenticateCookie(request: FastifyRequest) {
            const claims = await cookieSession.claimsFromCookie(request);
            if (!claims) return undefined;
            await orgService.ensure(claims.orgId);
            return { kind: 'user' as const, orgId: claims.orgId, subject: claims.subject, role: claims.role };
          },
        }
      : {}),
  };
}
