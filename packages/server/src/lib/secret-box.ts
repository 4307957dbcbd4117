import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Secrets the service must read back (webhook signing secrets: HMAC needs the secret itself,
 * so a hash will not do) are stored encrypted with AES-256-GCM under CORRAL_ENCRYPTION_KEY,
 * which lives outside the database. `context` (the owning row's identity) is bound in as
 * associated data, so a ciphertext copied onto another row does not decrypt there.
 *
 * Stored form: `v1.<key id>.<iv>.<ciphertext+tag>` (base64url). The key id (8 hex of the key's
 * SHA-256) names the key, so a rotated key can be told apart from a corrupted value.
 */
export interface SecretBox {
  seal(plaintext: string, context: string): string;
  open(sealed: string, context: string): string;
}

const VERSION = 'v1';

/** Reads a 32-byte key written as 64 hex characters or as base64 / base64url. */
export function parseEncryptionKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32) throw new Error('The encryption key must be 32 bytes, as 64 hex characters or base64');
  return key;
}

export const generateEncryptionKey = (): string => randomBytes(32).toString('hex');

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error('AES-256-GCM needs a 32-byte key');
  const keyId = createHash('sha256').update(key).digest('hex').slice(0, 8);
  return {
    seal(plaintext, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(context));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return [VERSION, keyId, iv.toString('base64url'), body.toString('base64url')].join('.');
    },
    open(sealed, context) {
      const [version, id, iv, body] = sealed.split('.');
      if (version !== VERSION || iv === undefined || body === undefined) throw new Error('Not a sealed secret');
      if (id !== keyId) throw new Error(`Sealed with another encryption key (${id}); is CORRAL_ENCRYPTION_KEY the one it was written with?`);
      const data = Buffer.from(body, 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(data.subarray(data.length - 16));
      return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]).toString('utf8');
    },
  };
}
