import type { Access, ApiKeyScope, Role, ScopeResource } from '@corral/contracts';
import { roles } from '@corral/contracts';

/** Who is calling: a person (JWT or cookie session) or an organization's API key. */
export type Principal =
  | { readonly kind: 'user'; readonly orgId: string; readonly subject: string; readonly role: Role }
  | { readonly kind: 'api_key'; readonly orgId: string; readonly keyId: string; readonly scope: ApiKeyScope };

/** What a route accepts. Absent `user` means JWTs are refused; absent `key`, API keys are. */
export interface AuthRule {
  readonly user?: Role;
  readonly key?: { readonly resource: ScopeResource; readonly access: Access } | 'any';
  /** The route needs no credentials at all (health, metrics, OpenAPI). */
  readonly public?: true;
}

/** The actor recorded in the audit log. */
export interface Actor {
  readonly type: 'user' | 'api_key' | 'system';
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
