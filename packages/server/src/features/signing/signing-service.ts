import type { DsseEnvelope, PolicyKey } from '@corral/contracts';
import type { Clock } from '../../lib/clock.js';
import { signEnvelope } from './dsse.js';
import type { SigningKey } from './signing-key.js';
import type { SigningKeyStore } from './signing-key-store.js';

/**
 * How long a public key stays listed after it last signed. An envelope is re-signed on every
 * connect and poll, so an online SDK holds a fresh one within seconds of a rotation; this covers
 * SDKs that were offline and still hold an envelope signed with the old key.
 */
export const KEY_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
/** How often a process writes that its key is in use; small against the retention. */
const RECORD_EVERY_MS = 60 * 60 * 1000;

interface Deps {
  signingKeyStore: SigningKeyStore;
  clock: Clock;
  key: SigningKey;
  retentionMs?: number;
}

export function createSigningService({ signingKeyStore, clock, key, retentionMs = KEY_RETENTION_MS }: Deps) {
  let recordedAt = Number.NEGATIVE_INFINITY;
  let recording: Promise<void> | undefined;

  // Many signatures at once (a reconnect storm) share one write.
  function recordUse(): Promise<void> {
    const now = clock.now();
    if (now - recordedAt < RECORD_EVERY_MS) return Promise.resolve();
    recording ??= signingKeyStore.recordUse(key.keyid, key.publicKeyHex, now).then(
      () => {
        recordedAt = now;
        recording = undefined;
      },
      (err: unknown) => {
        recording = undefined;
        throw err;
      },
    );
    return recording;
  }

  return {
    keyid: key.keyid,

    async sign(payloadType: string, payload: Buffer): Promise<DsseEnvelope> {
      await recordUse();
      return signEnvelope(key, payloadType, payload);
    },

    /** This process's key first, then every key any process signed with inside the retention. */
    async publicKeys(): Promise<PolicyKey[]> {
      await recordUse();
      const rows = await signingKeyStore.listUsedSince(clock.now() - retentionMs);
      const current: PolicyKey = { keyid: key.keyid, algorithm: 'ed25519', public_key: key.publicKeyHex };
      const others = rows
        .filter((r) => r.keyid !== key.keyid)
        .map((r): PolicyKey => ({ keyid: r.keyid, algorithm: 'ed25519', public_key: r.public_key }));
      return [current, ...others];
    },
  };
}
export type SigningService = ReturnType<typeof createSigningService>;
