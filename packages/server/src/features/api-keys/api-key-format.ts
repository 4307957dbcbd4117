import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Key format: `crl_<env>_<40 base62 chars>` (~238 bits). The first 8 random characters join the
 * environment tag to form the prefix, which is shown in lists and indexed for lookup; the
 * database keeps only the SHA-256 of the whole key. A fast hash is right here: the key is
 * random and long, so there is nothing to brute-force the way there is with a password.
 */
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_LENGTH = 40;
const PREFIX_RANDOM_CHARS = 8;
const keyPattern = /^crl_(live|test)_[0-9A-Za-z]{40}$/;

export type KeyEnvironment = 'live' | 'test';

function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 62 * 4: rejecting bytes above keeps every character equally likely.
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

export function generateApiKey(environment: KeyEnvironment): { key: string; prefix: string; hash: string } {
  const key = `crl_${environment}_${randomBase62(SECRET_LENGTH)}`;
  return { key, prefix: prefixOf(key), hash: hashApiKey(key) };
}

export const isWellFormedKey = (key: string): boolean => keyPattern.test(key);
export const prefixOf = (key: string): string => key.slice(0, `crl_live_`.length + PREFIX_RANDOM_CHARS);
export const hashApiKey = (key: string): string => createHash('sha256').update(key).digest('hex');

export function hashesEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
