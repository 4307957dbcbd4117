import type { Access, ApiKeyScope, Role, ScopeResource } from '@corral/contracts';
import { roles } from '@corral/contracts';

/** Who is calling: a person (JWT or cookie session) or an organization's API key. */
export type Principal =
  | {
      readonly kind: 'user';
      readonly orgId: string;
      readonly subject: string;
      readonly role: Role;
      /** When the credential (the JWT) expires, epoch ms: long-lived streams end then. */
      readonly expiresAt: number | undefined;
    }
  | { readonly kind: 'api_key'; readonly orgId: string; readonly keyId: string; readonly scope: ApiKeyScope };

/**
 * The actor recorded in the audit log. `alert` is an alert rule acting on its own (its
 * `kill_switch` action), with the rule's id.
 */
export interface Actor {
  readonly type: 'user' | 'api_key' | 'system' | 'alert';
  readonly id: string;
}

export const actorOf = (p: Principal): Actor =>
  p.kind === 'user' ? { type: 'user', id: p.subject } : { type: 'api_key', id: p.keyId };

export const roleAtLeast = (role: Role, minimum: Role): boolean => roles.indexOf(role) >= roles.indexOf(minimum);

export function scopeAllows(scope: ApiKeyScope, resource: ScopeResource, access: Access): boolean {
  switch (scope.kind) {
    case 'all':
      return true;
    case 'read_only':
      return access === 'read';
    case 'restricted': {
      const granted = scope.resources[resource];
      return granted === 'write' || (granted === 'read' && access === 'read');
    }
  }
}

/** A dashboard session as a transport presents it: the cookie's token and what CSRF needs. */
export interface SessionCredentials {
  readonly token: string;
  /** Whether the request may change something (anything but GET, HEAD, OPTIONS). */
  readonly isUnsafe: boolean;
  /** The anti-CSRF token the request carried, if any. */
  readonly csrfToken: string | undefined;
}

/** Turns credentials into a principal; every failure is an UnauthorizedError (or Forbidden for CSRF). */
export interface Authenticator {
  authenticateBearer(token: string): Promise<Principal>;
  authenticateApiKey(key: string): Promise<Principal>;
  authenticateSession(session: SessionCredentials): Promise<Principal>;
}
