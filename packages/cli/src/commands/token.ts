import { type Role, roles } from '@corral/contracts';
import { userInfo } from 'node:os';
import { type Command, oneOf, parseOrgId, UsageError } from '../command.js';
import { loadServer, loadServiceConfig } from '../server.js';

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };
const MAX_TTL_SECONDS = 365 * 86_400;

/** `3600`, `90s`, `15m`, `1h`, `7d` → seconds. */
export function parseTtl(value: string): number | undefined {
  const match = /^(\d{1,9})([smhd]?)$/.exec(value);
  if (!match?.[1]) return undefined;
  const seconds = Number(match[1]) * (UNIT_SECONDS[match[2] || 's'] ?? 1);
  return seconds >= 1 && seconds <= MAX_TTL_SECONDS ? seconds : undefined;
}

/** The `exp` the token actually carries, so the printed time and the token cannot disagree. */
function expiryOf(jwt: string): string {
  const payload = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp: number };
  return new Date(payload.exp * 1000).toISOString();
}

export function defaultSubject(): string {
  try {
    return userInfo().username || 'operator';
  } catch {
    return 'operator';
  }
}

/** Signs a JWT with the secret the server verifies with (its configuration, its DATA_DIR). */
export async function mintJwt(claims: { orgId: string; role: Role; subject: string }, ttlSeconds: number): Promise<string> {
  const config = await loadServiceConfig();
  const { jwtSecretOf, signJwt } = await loadServer();
  return signJwt(jwtSecretOf(config), claims, ttlSeconds);
}

export const token: Command = {
  name: 'token',
  describe: 'Print a signed JWT (HS256) for an organization and role',
  args: [],
  options: {
    org: { type: 'string', placeholder: 'uuid', required: true, describe: 'Organization id; the organization is created on first use' },
    role: { type: 'string', placeholder: 'role', required: true, describe: `One of ${roles.join(', ')}` },
    ttl: { type: 'string', placeholder: 'duration', describe: 'Lifetime: seconds, or with a unit: 90s, 15m, 1h, 7d (default 1h, at most 365d)' },
    sub: { type: 'string', placeholder: 'id', describe: 'Subject (user id) recorded in the audit log (default: your login name)' },
  },
  notes: [
    'The token is signed with the same secret the server verifies with: CORRAL_JWT_SECRET, or the',
    'secret generated into DATA_DIR (created here if the server has not started yet). Run it with',
    'the server\'s environment. Without --json only the token is printed, so TOKEN=$(corral token ...) works.',
  ],
  async run({ options, output }) {
    const orgId = parseOrgId(options.org as string | undefined, '--org', token);
    const role = oneOf(options.role as string | undefined, roles, '--role', token);
    const ttlText = (options.ttl as string | undefined) ?? '1h';
    const ttlSeconds = parseTtl(ttlText);
    if (ttlSeconds === undefined) throw new UsageError(`--ttl must be a duration from 1s to 365d such as 3600, 15m, 1h or 7d, got "${ttlText}"`, token);
    const subject = (options.sub as string | undefined) ?? defaultSubject();
    if (subject.trim() === '' || subject.length > 200) throw new UsageError('--sub must be 1 to 200 characters', token);

    const jwt = await mintJwt({ orgId, role, subject }, ttlSeconds);
    output.result(jwt, { token: jwt, org_id: orgId, role, sub: subject, expires_at: expiryOf(jwt) });
  },
};
