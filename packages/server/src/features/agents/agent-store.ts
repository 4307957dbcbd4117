import type { Kysely, Transaction, Updateable } from 'kysely';
import type { Store } from '../../db/database.js';
import type { AgentTable, Database } from '../../db/schema.js';

export type AgentRow = AgentTable;
type Conn = Transaction<Database> | Kysely<Database>;

/** Every read hides soft-deleted agents unless it says otherwise. */
export function createAgentStore({ kysely: k }: Store) {
  return {
    /** Inserts unless the slug is taken in the organization (slugs are unique per organization); answers whether it did. */
    async insertIfSlugFree(trx: Conn, row: AgentRow): Promise<boolean> {
      const r = await trx.insertInto('agents').values(row).onConflict((oc) => oc.columns(['org_id', 'slug']).doNothing()).executeTakeFirst();
      return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
    },

    /** Live agents provisioned from the given OTLP service names: name → agent id. */
    async liveByServiceName(conn: Conn, orgId: string, names: readonly string[]): Promise<Map<string, string>> {
      if (names.length === 0) return new Map();
      const rows = await conn
        .selectFrom('agents')
        .select(['id', 'service_name'])
        .where('org_id', '=', orgId)
        .where('service_name', 'in', names)
        .where('deleted_at', 'is', null)
        .execute();
      return new Map(rows.flatMap((r) => (r.service_name === null ? [] : [[r.service_name, r.id] as const])));
    },

    async countLive(trx: Conn, orgId: string): Promise<number> {
      const row = await trx
        .selectFrom('agents')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('org_id', '=', orgId)
        .where('deleted_at', 'is', null)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    /** Slugs stay reserved after soft delete, so old telemetry and links stay unambiguous. */
    async slugsLike(trx: Conn, orgId: string, base: string): Promise<Set<string>> {
      const rows = await trx
        .selectFrom('agents')
        .select('slug')
        .where('org_id', '=', orgId)
        .where((eb) => eb.or([eb('slug', '=', base), eb('slug', 'like', `${base}-%`)]))
        .execute();
      return new Set(rows.map((r) => r.slug));
    },

    async get(orgId: string, id: string, conn: Conn | undefined = k): Promise<AgentRow | undefined> {
      return (conn ?? k)
        .selectFrom('agents')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
    },

    async list(orgId: string, limit: number, before: string | undefined): Promise<AgentRow[]> {
      let q = k.selectFrom('agents').selectAll().where('org_id', '=', orgId).where('deleted_at', 'is', null);
      if (before) q = q.where('id', '<', before);
      return q.orderBy('id', 'desc').limit(limit + 1).execute();
    },

    async update(trx: Conn, orgId: string, id: string, changes: Updateable<AgentTable>): Promise<AgentRow | undefined> {
      await trx
        .updateTable('agents')
        .set(changes)
        .where('org_id', '=', orgId)
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .execute();
      return this.get(orgId, id, trx);
    },

    /** Sets the public key only if none is set; the caller reads the row back to tell the cases apart. */
    async setPublicKeyIfEmpty(trx: Conn, orgId: string, id: string, publicKey: string, now: number): Promise<boolean> {
      const r = await trx
        .updateTable('agents')
        .set({ public_key: publicKey, updated_at: now })
        .where('org_id', '=', orgId)
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .where('public_key', 'is', null)
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },
  };
}
export type AgentStore = ReturnType<typeof createAgentStore>;
