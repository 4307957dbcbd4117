import type { Kysely, Transaction } from 'kysely';
import type { Store } from '../../db/database.js';
import type { ApiKeyTable, Database } from '../../db/schema.js';

export type ApiKeyRow = ApiKeyTable;

export function createApiKeyStore(db: Store) {
  const k = db.kysely;
  return {
    async insert(trx: Transaction<Database> | Kysely<Database>, row: ApiKeyRow): Promise<void> {
      await trx.insertInto('api_keys').values(row).execute();
    },

    /** Counts keys that hold a plan slot: not revoked and not expired. */
    async countActive(trx: Transaction<Database> | Kysely<Database>, orgId: string, now: number): Promise<number> {
      const row = await trx
        .selectFrom('api_keys')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('org_id', '=', orgId)
        .where('revoked_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async list(orgId: string, limit: number, before: string | undefined): Promise<ApiKeyRow[]> {
      let q = k.selectFrom('api_keys').selectAll().where('org_id', '=', orgId);
      if (before) q = q.where('id', '<', before);
      return q.orderBy('id', 'desc').limit(limit + 1).execute();
    },

    async get(orgId: string, id: string, conn: Transaction<Database> | Kysely<Database> = k): Promise<ApiKeyRow | undefined> {
      return conn.selectFrom('api_keys').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
    },

    /** Authentication's lookup: by the indexed prefix, across organizations. */
    async findByPrefix(prefix: string): Promise<ApiKeyRow[]> {
      return k.selectFrom('api_keys').selectAll().where('key_prefix', '=', prefix).execute();
    },

    async revoke(trx: Transaction<Database>, orgId: string, id: string, now: number): Promise<boolean> {
      const r = await trx
        .updateTable('api_keys')
        .set({ revoked_at: now })
        .where('org_id', '=', orgId)
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },

    async delete(trx: Transaction<Database>, orgId: string, id: string): Promise<void> {
      await trx.deleteFrom('api_keys').where('org_id', '=', orgId).where('id', '=', id).execute();
    },

    /** Only moves forward, so concurrent processes cannot set an older time. */
    async touch(orgId: string, id: string, at: number): Promise<void> {
      await k
        .updateTable('api_keys')
        .set({ last_used_at: at })
        .where('org_id', '=', orgId)
        .where('id', '=', id)
        .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
        .execute();
    },
  };
}
export type ApiKeyStore = ReturnType<typeof createApiKeyStore>;
