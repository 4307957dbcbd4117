import type { Kysely, Transaction } from 'kysely';
import type { AuditEntry } from '@corral/contracts';
import type { Store } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { Actor } from '../../domain/principal.js';
import { toIso } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';

export interface AuditRecord {
  orgId: string;
  actor: Actor;
  action: string;
  targetType: string;
  targetId: string;
  reason?: string | null | undefined;
  details?: Record<string, unknown> | undefined;
  at: number;
}

export function createAuditStore(db: Store) {
  return {
    /** Written inside the mutation's own transaction, so a change and its record land together. */
    async record(trx: Transaction<Database> | Kysely<Database>, entry: AuditRecord): Promise<void> {
      await trx
        .insertInto('audit_log')
        .values({
          org_id: entry.orgId,
          id: newId(),
          actor_type: entry.actor.type,
          actor_id: entry.actor.id,
          action: entry.action,
          target_type: entry.targetType,
          target_id: entry.targetId,
          reason: entry.reason ?? null,
          details: entry.details ? JSON.stringify(entry.details) : null,
          created_at: entry.at,
        })
        .execute();
    },

    async list(orgId: string, opts: { limit: number; before?: string | undefined; action?: string | undefined; targetId?: string | undefined }) {
      let q = db.kysely.selectFrom('audit_log').selectAll().where('org_id', '=', orgId);
      if (opts.before) q = q.where('id', '<', opts.before);
      if (opts.action) q = q.where('action', '=', opts.action);
      if (opts.targetId) q = q.where('target_id', '=', opts.targetId);
      const rows = await q.orderBy('id', 'desc').limit(opts.limit + 1).execute();
      return rows;
    },
  };
}
export type AuditStore = ReturnType<typeof createAuditStore>;

export function toAuditEntry(row: Database['audit_log']): AuditEntry {
  return {
    id: row.id,
    org_id: row.org_id,
    actor_type: row.actor_type as AuditEntry['actor_type'],
    actor_id: row.actor_id,
    action: row.action,
    target_type: row.target_type,
    target_id: row.target_id,
    reason: row.reason,
    details: row.details ? (JSON.parse(row.details) as Record<string, unknown>) : null,
    created_at: toIso(row.created_at),
  };
}
