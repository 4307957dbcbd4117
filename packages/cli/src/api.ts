import { type ApiError, type CorralClient, createCorralClient } from '@corral/client';
import type { Command as Commander } from 'commander';
import { UsageError } from './command.js';
import { type CliEnvironment, cliEnvironment } from './environment.js';
import { readProfiles } from './profiles.js';

export const DEFAULT_URL = 'http://127.0.0.1:8080';

export interface GlobalOptions {
  url?: string;
  token?: string;
  profile?: string;
  json?: boolean;
}

export interface Connection {
  url: string;
  token: string;
  profile: string;
}

/**
 * Where to connect and with which token, first found wins: the flags (--url, --token), the
 * environment (CORRAL_URL, CORRAL_TOKEN), then the profile (--profile, CORRAL_PROFILE, or the
 * one `corral login` saved last).
 */
export function resolveConnection(options: GlobalOptions, env: CliEnvironment = cliEnvironment()): Connection {
  const stored = readProfiles();
  const profile = options.profile ?? env.profile ?? stored.current;
  const saved = stored.profiles[profile];
  if ((options.profile ?? env.profile) !== undefined && !saved && !(options.token ?? env.token)) {
    throw new UsageError(`no profile "${profile}"; run "corral login --profile ${profile}" first`);
  }
  const url = options.url ?? env.url ?? saved?.url ?? DEFAULT_URL;
  const token = options.token ?? env.token ?? saved?.token;
  if (!token) throw new UsageError('not logged in', undefined, 'Run "corral login", or set CORRAL_URL and CORRAL_TOKEN.');
  if (!/^https?:\/\//.test(url)) throw new UsageError(`--url must start with http:// or https://, got "${url}"`);
  return { url, token, profile };
}

export const globalsOf = (command: Commander): GlobalOptions => command.optsWithGlobals<GlobalOptions>();

export function clientFor(command: Commander): CorralClient {
  const { url, token } = resolveConnection(globalsOf(command));
  return createCorralClient({ baseUrl: url, token });
}

/** Exit codes scripts can rely on (docs/cli.md). */
export const exitCodes = {
  ok: 0,
  failed: 1,
  usage: 2,
  unauthorized: 3,
  notFound: 4,
  conflict: 5,
  rateLimited: 6,
} as const;

export function exitCodeOf(err: ApiError): number {
  if (err.status === 400 || err.status === 413 || err.status === 415) return exitCodes.usage;
  if (err.status === 401 || err.status === 403) return exitCodes.unauthorized;
  if (err.status === 404) return exitCodes.notFound;
  if (err.status === 409) return exitCodes.conflict;
  if (err.status === 429) return exitCodes.rateLimited;
  return exitCodes.failed;
}

/** A network failure (server down, wrong port) as one readable line instead of a stack. */
export function connectionError(err: unknown): string | undefined {
  if (!(err instanceof TypeError) || err.message !== 'fetch failed') return undefined;
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return `cannot reach the API: ${cause?.code ?? cause?.message ?? 'connection failed'}`;
}
