import type { Store } from '../../db/database.js';
import type { SigningKeyTable } from '../../db/schema.js';

export type SigningKeyRow = SigningKeyTable;

export function createSigningKeyStore(db: Store) {
  const k = db.kysely;
  return {
    /** Records that `keyid` signed at `now`; only moves last_used_at forward. */
    async recordUse(keyid: string, publicKeyHex: string, now: number): Promise<void> {
      await k
        .insertInto('signing_keys')
        .values({ keyid, algorithm: 'ed25519', public_key: publicKeyHex, created_at: now, last_used_at: now })
        .onConflict((oc) => oc.column('keyid').doUpdateSet({ last_used_at: now }).where('signing_keys.last_used_at', '<', now))
        .execute();
    },

    async listUsedSince(since: number): Promise<SigningKeyRow[]> {
      return k.selectFrom('signing_keys').selectAll().where('last_used_at', '>=', since).orderBy('last_used_at', 'desc').execute();
    },
  };
}
export type SigningKeyStore = ReturnType<typeof createSigningKeyStore>;
