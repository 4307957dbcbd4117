import { describe, expect, it } from 'vitest';
import { createSecretBox, generateEncryptionKey, parseEncryptionKey } from './secret-box.js';

describe('secret box', () => {
  const box = createSecretBox(parseEncryptionKey(generateEncryptionKey()));

  it('seals to text that does not show the secret and opens only with the same key and context', () => {
    const sealed = box.seal('whsec_c2VjcmV0', 'rule-1');
    expect(sealed).toMatch(/^v1\.[0-9a-f]{8}\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain('c2VjcmV0');
    expect(box.open(sealed, 'rule-1')).toBe('whsec_c2VjcmV0');
    expect(box.seal('whsec_c2VjcmV0', 'rule-1')).not.toBe(sealed);
    expect(() => box.open(sealed, 'rule-2')).toThrow();
    expect(() => createSecretBox(parseEncryptionKey(generateEncryptionKey())).open(sealed, 'rule-1')).toThrow(/another encryption key/);
  });

  it('reads keys as 64 hex characters or base64 of 32 bytes, and nothing else', () => {
    expect(parseEncryptionKey('ab'.repeat(32))).toHaveLength(32);
    expect(parseEncryptionKey(Buffer.alloc(32, 7).toString('base64'))).toHaveLength(32);
    expect(() => parseEncryptionKey('short')).toThrow(/32 bytes/);
  });
});
