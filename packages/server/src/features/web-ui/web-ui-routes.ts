import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * The dashboard (packages/dashboard, a static bundle built by Vite) on the main host at `/`.
 * History routing: any GET outside the API that is not a file answers index.html, so a deep link
 * such as /agents/<id> loads the page, while an unknown /v1/* path stays the API's JSON 404.
 * Everything here is public: the files hold no data; the page signs in through /v1/auth/session.
 */
const publicRoute = { config: { auth: { public: true as const } }, schema: { hide: true } };

// The bundle loads nothing from elsewhere, and the policy says so: no CDN, no font host, no frames.
const contentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self'",
  // uPlot sizes its canvas with style attributes.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

const isApiPath = (url: string): boolean => url === '/v1' || url.startsWith('/v1/') || url.startsWith('/v1?');

export async function webUiRoutes(app: FastifyInstance, { root }: { root: string }): Promise<void> {
  await app.register(fastifyStatic, { root, serve: false, index: false, dotfiles: 'deny', cacheControl: false });

  const page = (_request: FastifyRequest, reply: FastifyReply) =>
    reply
      .header('content-security-policy', contentSecurityPolicy)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'same-origin')
      .header('cache-control', 'no-cache')
      .sendFile('index.html');

  app.get('/', publicRoute, page);
  // File names under assets/ carry a content hash, so they never change.
  app.get<{ Params: { '*': string } }>('/assets/*', publicRoute, (request, reply) =>
    reply.header('x-content-type-options', 'nosniff').header('cache-control', 'public, max-age=31536000, immutable').sendFile(`assets/${request.params['*']}`),
  );
  app.get('/*', publicRoute, (request, reply) => (isApiPath(request.url) ? reply.callNotFound() : page(request, reply)));
}
