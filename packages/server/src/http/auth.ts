import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ForbiddenError, UnauthorizedError } from '../errors.js';
import { type AuthRule, type Principal, roleAtLeast, scopeAllows } from './principal.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthRule;
  }
  interface FastifyRequest {
    principal: Principal | undefined;
  }
}

/** Turns credentials into a principal; implemented by the auth and api-keys features. */
export interface Authenticator {
  authenticateBearer(token: string): Promise<Principal>;
  authenticateApiKey(key: string): Promise<Principal>;
  /** Cookie sessions, where the deployment has them. Returns undefined when there is no session cookie. */
  authenticateCookie?(request: FastifyRequest): Promise<Principal | undefined>;
}

/** Reads the principal a route's auth rule guarantees. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new UnauthorizedError();
  return request.principal;
}

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
  const authorization = request.headers.authorization;
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match?.[1]) throw new UnauthorizedError('Authorization header must be "Bearer <token>"');
    return authenticator.authenticateBearer(match[1]);
  }
  const apiKey = request.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey.length > 0) return authenticator.authenticateApiKey(apiKey);
  if (rule.user && authenticator.authenticateCookie) {
    const principal = await authenticator.authenticateCookie(request);
    if (principal) return principal;
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
