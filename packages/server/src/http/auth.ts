import type { Access, Role, ScopeResource } from '@corral/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { type Authenticator, type Principal, roleAtLeast, scopeAllows } from '../domain/principal.js';
import { ForbiddenError, UnauthorizedError } from '../errors.js';

/** What a route accepts. Absent `user` means JWTs are refused; absent `key`, API keys are. */
export interface AuthRule {
  readonly user?: Role;
  readonly key?: { readonly resource: ScopeResource; readonly access: Access } | 'any';
  /** The route needs no credentials at all (health, metrics, OpenAPI). */
  readonly public?: true;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthRule;
  }
  interface FastifyRequest {
    principal: Principal | undefined;
  }
}

export const SESSION_COOKIE = 'corral_session';
export const CSRF_HEADER = 'x-csrf-token';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Reads the principal a route's auth rule guarantees. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new UnauthorizedError();
  return request.principal;
}

/** The token of `Authorization: Bearer <token>`, if the header has that form. */
export function bearerToken(request: FastifyRequest): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
}

const cookieToken = (request: FastifyRequest): string | undefined => request.cookies[SESSION_COOKIE] || undefined;

/** The token that authenticated a person's request: a bearer token wins over the cookie, as below. */
export const sessionToken = (request: FastifyRequest): string | undefined => bearerToken(request) ?? cookieToken(request);

/**
 * Authenticates and authorizes in `onRequest`, before the body is read, so an anonymous caller
 * learns nothing about validation. A route without an auth rule is refused: nothing is public
 * by omission.
 */
export const authPlugin = fp(async (app: FastifyInstance, opts: { authenticator: Authenticator }) => {
  app.decorateRequest('principal', undefined);
  app.addHook('onRequest', async (request) => {
    const rule = request.routeOptions.config.auth;
    if (rule?.public) return;
    if (!request.routeOptions.url) return; // unknown route: the not-found handler answers
    if (!rule) throw new ForbiddenError('Route has no access rule');
    const principal = await authenticate(request, opts.authenticator, rule);
    authorize(principal, rule);
    request.principal = principal;
  });
});

async function authenticate(request: FastifyRequest, authenticator: Authenticator, rule: AuthRule): Promise<Principal> {
  if (request.headers.authorization !== undefined) {
    const token = bearerToken(request);
    if (!token) throw new UnauthorizedError('Authorization header must be "Bearer <token>"');
    return authenticator.authenticateBearer(token);
  }
  const apiKey = request.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey.length > 0) return authenticator.authenticateApiKey(apiKey);
  const token = rule.user ? cookieToken(request) : undefined;
  if (token) {
    const csrf = request.headers[CSRF_HEADER];
    return authenticator.authenticateSession({
      token,
      isUnsafe: !SAFE_METHODS.has(request.method),
      csrfToken: typeof csrf === 'string' ? csrf : undefined,
    });
  }
  throw new UnauthorizedError();
}

function authorize(principal: Principal, rule: AuthRule): void {
  if (principal.kind === 'user') {
    if (!rule.user) throw new ForbiddenError('This endpoint takes an API key (X-API-Key)');
    if (!roleAtLeast(principal.role, rule.user)) throw new ForbiddenError(`This action needs the ${rule.user} role or higher`);
    return;
  }
  if (!rule.key) throw new ForbiddenError('API keys cannot be used here; use a JWT');
  if (rule.key === 'any') return;
  if (!scopeAllows(principal.scope, rule.key.resource, rule.key.access)) {
    throw new ForbiddenError(`The API key's scope does not allow ${rule.key.access} access to ${rule.key.resource}`);
  }
}
