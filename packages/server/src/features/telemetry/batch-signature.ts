import { createPublicKey, type KeyObject, verify } from 'node:crypto';

// DER prefix of an Ed25519 SubjectPublicKeyInfo; the 32 raw key bytes follow it.
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const hex = (length: number) => new RegExp(`^[0-9a-fA-F]{${length}}$`);
const signaturePattern = hex(128);
const publicKeyPattern = hex(64);

const keyCache = new Map<string, KeyObject>();

function keyObjectOf(publicKeyHex: string): KeyObject {
  const normalized = publicKeyHex.toLowerCase();
  let key = keyCache.get(normalized);
  if (!key) {
    key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(normalized, 'hex')]), format: 'der', type: 'spki' });
    if (keyCache.size >= 10_000) keyCache.clear();
    keyCache.set(normalized, key);
  }
  return key;
}

export const isPublicKeyHex = (value: string): boolean => publicKeyPattern.test(value);

/** Ed25519 over the exact request bytes (contract section 7). Malformed input is just "invalid". */
export function verifyBatchSignature(body: Buffer, signatureHex: string, publicKeyHex: string): boolean {
  if (!signaturePattern.test(signatureHex) || !isPublicKeyHex(publicKeyHex)) return false;
  try {
    return verify(null, body, keyObjectOf(publicKeyHex), Buffer.from(signatureHex, 'hex'));
  } catch {
    return false;
  }
}
