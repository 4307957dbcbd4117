import type { Authenticator } from '../../http/auth.js';
import type { ApiKeyService } from '../api-keys/index.js';
import type { OrgService } from '../orgs/index.js';
import type { JwtVerifier } from './jwt.js';

interface Deps {
  verifyJwt: JwtVerifier;
  apiKeyService: Pick<ApiKeyService, 'authenticate'>;
  orgService: Pick<OrgService, 'ensure'>;
}

export function createAuthenticator({ verifyJwt, apiKeyService, orgService }: Deps): Authenticator {
  return {
    async authenticateBearer(token) {
      const claims = await verifyJwt(token);
      // An organization is created on the first valid JWT that names it (contract section 2).
      await orgService.ensure(claims.orgId);
      return { kind: 'user', orgId: claims.orgId, subject: claims.subject, role: claims.role };
    },
    authenticateApiKey: (key) => apiKeyService.authenticate(key),
  };
}
