import { type Role, roles } from '@corral/contracts';
import { createPublicKey } from 'node:crypto';
import {
  createRemoteJWKSet, decodeProtectedHeader, importSPKI, jwtVerify, SignJWT, type JWTPayload, type JWTVerifyGetKey, type CryptoKey,
} from 'jose';
import { UnauthorizedError } from '../../errors.js';
import { isUuid } from '../../lib/ids.js';

export interface JwtSettings {
  secret: string;
  jwksUrl?: string | undefined;
  publicKeyPem?: string | undefined;
  issuer?: string | undefined;
  audience?: string | undefined;
}

export interface JwtClaims {
  subject: string;
  orgId: string;
  role: Role;
  /** `exp` in epoch ms (every accepted token has one). */
  expiresAt?: number | undefined;
}

const ASYMMETRIC = ['RS256', 'ES256', 'EdDSA'] as const;

async function importPem(pem: string): Promise<{ key: CryptoKey; alg: string }> {
  const type = createPublicKey(pem).asymmetricKeyType;
  const alg = type === 'rsa' ? 'RS256' : type === 'ec' ? 'ES256' : type === 'ed25519' ? 'EdDSA' : undefined;
  if (!alg) throw new Error(`CORRAL_JWT_PUBLIC_KEY: unsupported key type ${type ?? 'unknown'}`);
  return { key: await importSPKI(pem, alg), alg };
}

/**
 * Verifies tokens with the algorithm pinned per key: HS256 only against the shared secret, and
 * RS256/ES256/EdDSA only against the configured public key or JWKS. `none` and algorithm
 * confusion (an HS256 token "signed" with a public key) therefore never verify. `exp` is required.
 */
export async function createJwtVerifier(settings: JwtSettings) {
  const secret = new TextEncoder().encode(settings.secret);
  const pem = settings.publicKeyPem ? await importPem(settings.publicKeyPem) : undefined;
  const jwks: JWTVerifyGetKey | undefined = settings.jwksUrl ? createRemoteJWKSet(new URL(settings.jwksUrl)) : undefined;
  const common = {
    requiredClaims: ['exp', 'sub'],
    ...(settings.issuer ? { issuer: settings.issuer } : {}),
    ...(settings.audience ? { audience: settings.audience } : {}),
  };

  async function verifyPayload(token: string): Promise<JWTPayload> {
    const { alg } = decodeProtectedHeader(token);
    if (alg === 'HS256') return (await jwtVerify(token, secret, { ...common, algorithms: ['HS256'] })).payload;
    if (pem && alg === pem.alg) return (await jwtVerify(token, pem.key, { ...common, algorithms: [pem.alg] })).payload;
    if (jwks && (ASYMMETRIC as readonly string[]).includes(alg ?? '')) {
      return (await jwtVerify(token, jwks, { ...common, algorithms: [...ASYMMETRIC] })).payload;
    }
    throw new UnauthorizedError(`JWT algorithm ${alg ?? 'none'} is not accepted`);
  }

  return async function verify(token: string): Promise<JwtClaims> {
    let payload: JWTPayload;
    try {
      payload = await verifyPayload(token);
    } catch (err) {
      if (err instanceof UnauthorizedError) throw err;
      throw new UnauthorizedError('Invalid or expired token');
    }
    const orgId = typeof payload.org_id === 'string' ? payload.org_id.toLowerCase() : '';
    if (!isUuid(orgId)) throw new UnauthorizedError('Token has no valid org_id claim');
    const role = payload.role;
    if (typeof role !== 'string' || !(roles as readonly string[]).includes(role)) {
      throw new UnauthorizedError(`Token role must be one of ${roles.join(', ')}`);
    }
    return { subject: String(payload.sub), orgId, role: role as Role, expiresAt: typeof payload.exp === 'number' ? payload.exp * 1000 : undefined };
  };
}
export type JwtVerifier = Awaited<ReturnType<typeof createJwtVerifier>>;

/** Mints an HS256 token, for `corral token` and tests. */
export async function signJwt(secret: string, claims: JwtClaims, ttlSeconds: number): Promise<string> {
  return new SignJWT({ org_id: claims.orgId, role: claims.role })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.subject)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
    .sign(new TextEncoder().encode(secret));
}
