/**
 * `@corral/client`: the typed HTTP client of the Corral API. The types are generated from the
 * OpenAPI document the server serves (src/schema.ts), so a call that the server would not accept
 * does not compile. Used by the CLI and the dashboard alike.
 *
 * @example
 * const corral = createCorralClient({ baseUrl: 'http://127.0.0.1:8080', token: jwt });
 * const agents = unwrap(await corral.GET('/v1/agents', { params: { query: { limit: 50 } } }));
 */
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type { components, paths } from './schema.js';
export type Schemas = components['schemas'];
export type Agent = Schemas['Agent'];
export type ApiKey = Schemas['ApiKey'];
export type Alert = Schemas['Alert'];
export type PolicyVersion = Schemas['PolicyVersion'];
export type DashboardEvent = Schemas['DashboardEvent'];
export type AuditEntry = Schemas['AuditEntry'];
export type CorralClient = Client<paths>;

export interface CorralClientOptions {
  /** The main API host, e.g. http://127.0.0.1:8080 (no trailing /v1). */
  baseUrl: string;
  /** A JWT, sent as `Authorization: Bearer`. */
  token?: string | undefined;
  /** An API key, sent as `X-API-Key`. */
  apiKey?: string | undefined;
  /** For a cookie session (the dashboard): sent as `X-CSRF-Token` on every change. */
  csrfToken?: (() => string | undefined) | undefined;
  /** Another fetch (tests, proxies); the global one by default. */
  fetch?: typeof globalThis.fetch | undefined;
  /** Cookies travel with the request (the dashboard); "same-origin" by default. */
  credentials?: 'omit' | 'same-origin' | 'include' | undefined;
}

const unsafeMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function createCorralClient(options: CorralClientOptions): CorralClient {
  const client = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    credentials: options.credentials ?? 'same-origin',
  });
  const auth: Middleware = {
    onRequest({ request }) {
      if (options.token) request.headers.set('authorization', `Bearer ${options.token}`);
      if (options.apiKey) request.headers.set('x-api-key', options.apiKey);
      const csrf = options.csrfToken?.();
      if (csrf && unsafeMethods.has(request.method)) request.headers.set('x-csrf-token', csrf);
      return request;
    },
  };
  client.use(auth);
  return client;
}

export interface FieldError {
  field: string;
  message: string;
}

/** An error answer of the API: its HTTP status and the stable `code` of the error body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

interface ErrorShape {
  error?: { code?: unknown; message?: unknown; details?: unknown };
}

/** Turns any failed response into an ApiError, using the error body when it has one. */
export function apiErrorOf(response: Response, body: unknown): ApiError {
  const error = (body as ErrorShape | undefined)?.error;
  const code = typeof error?.code === 'string' ? error.code : `http_${response.status}`;
  const message = typeof error?.message === 'string' ? error.message : `${response.status} ${response.statusText}`.trim();
  const retryAfter = Number(response.headers.get('retry-after'));
  return new ApiError(response.status, code, message, error?.details, Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined);
}

/** The data of a successful answer, or an ApiError thrown for a failed one. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.response.ok && result.data !== undefined) return result.data;
  throw apiErrorOf(result.response, result.error);
}

/** Every page of a cursor-paged list, up to `max` items. */
export async function collect<T>(
  page: (cursor: string | undefined) => Promise<{ data: T[]; has_more: boolean; next_cursor: string | null }>,
  max = 10_000,
): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (;;) {
    const res = await page(cursor);
    items.push(...res.data);
    if (!res.has_more || !res.next_cursor || items.length >= max) return items.slice(0, max);
    cursor = res.next_cursor;
  }
}

export { diffLines, policyText, type DiffLine } from './diff.js';
export { readSse, type SseMessage } from './sse.js';
