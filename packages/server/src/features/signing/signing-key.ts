import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';

/** The service's policy-signing key, with the public half in the forms SDKs pin. */
export interface SigningKey {
  readonly privateKey: KeyObject;
  /** Raw 32-byte Ed25519 public key, hex. */
  readonly publicKeyHex: string;
  /** Fingerprint of the public key; stable, so SDKs can pick the right key from /v1/policy-keys. */
  readonly keyid: string;
}

// PKCS#8 DER prefix for an Ed25519 private key; the 32-byte seed follows (RFC 8410).
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export function generateSigningKeyPem(): string {
  return generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString().trim();
}

function seedFrom(material: string): Buffer | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(material)) return Buffer.from(material, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(material)) {
    const bytes = Buffer.from(material.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (bytes.length === 32) return bytes;
  }
  return undefined;
}

/**
 * Reads CORRAL_SIGNING_KEY (or the generated key file): a PKCS#8 PEM, or the 32-byte Ed25519
 * seed as hex or base64. Anything else stops the start-up with a message naming the variable.
 */
export function parseSigningKey(material: string): SigningKey {
  const text = material.trim().replace(/\\n/g, '\n');
  let privateKey: KeyObject;
  try {
    const seed = seedFrom(text);
    privateKey = seed
      ? createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' })
      : createPrivateKey(text);
  } catch {
    throw new Error('CORRAL_SIGNING_KEY must be an Ed25519 private key: PKCS#8 PEM, or a 32-byte seed as hex or base64');
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') {
    throw new Error(`CORRAL_SIGNING_KEY must be an Ed25519 key, not ${privateKey.asymmetricKeyType ?? 'unknown'}`);
  }
  const spki = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  const raw = spki.subarray(spki.length - 32);
  return {
    privateKey,
    publicKeyHex: raw.toString('hex'),
    keyid: createHash('sha256').update(raw).digest('hex').slice(0, 32),
  };
}
