import type { Authenticator, Principal, SessionCredentials } from '../../domain/principal.js';
import type { ApiKeyService } from '../api-keys/index.js';
import type { OrgService } from '../orgs/index.js';
import type { JwtClaims, JwtVerifier } from './jwt.js';

interface Deps {
  verifyJwt: JwtVerifier;
  apiKeyService: Pick<ApiKeyService, 'authenticate'>;
  orgService: Pick<OrgService, 'ensure'>;
  /** The dashboard's cookie session; it also enforces CSRF on unsafe methods. */
  sessions: { verify(session: SessionCredentials): Promise<JwtClaims> };
}

export function createAuthenticator({ verifyJwt, apiKeyService, orgService, sessions }: Deps): Authenticator {
  async function userOf(claims: JwtClaims): Promise<Principal> {
    // An organization is created on the first valid JWT that names it (contract section 2).
    await orgService.ensure(claims.orgId);
    return { kind: 'user', orgId: claims.orgId, subject: claims.subject, role: claims.role, expiresAt: claims.expiresAt };
  }
  return {
    authenticateBearer: async (token) => userOf(await verifyJwt(token)),
    authenticateApiKey: (key) => apiKeyService.authenticate(key),
    authenticateSession: async (session) => userOf(await sessions.verify(session)),
  };
}
