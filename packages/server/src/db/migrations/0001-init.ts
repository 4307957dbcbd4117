import type { Kysely, Migration } from 'kysely';
import type { DialectName } from '../dialect/types.js';
import { columnTypes } from './column-types.js';

// Primary keys lead with org_id so the schema can be distributed by organization (Citus).
export const init = (dialect: DialectName): Migration => {
  const t = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('organizations')
        .addColumn('org_id', t.uuid, (c) => c.primaryKey())
        .addColumn('plan', 'text', (c) => c.notNull())
        .addColumn('created_at', t.time, (c) => c.notNull())
        .addColumn('updated_at', t.time, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('org_id', t.uuid, (c) => c.notNull())
        .addColumn('id', t.uuid, (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('key_prefix', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull())
        .addColumn('environment', 'text', (c) => c.notNull())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('last_used_at', t.time)
        .addColumn('expires_at', t.time)
        .addColumn('revoked_at', t.time)
        .addColumn('created_at', t.time, (c) => c.notNull())
        .addPrimaryKeyConstraint('api_keys_pk', ['org_id', 'id'])
        .execute();
      // Authentication looks a key up by its prefix, across organizations.
      await db.schema.createIndex('api_keys_prefix_idx').on('api_keys').column('key_prefix').execute();

      await db.schema
        .createTable('agents')
        .addColumn('org_id', t.uuid, (c) => c.notNull())
        .addColumn('id', t.uuid, (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('slug', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('public_key', 'text')
        .addColumn('kill_switch_active', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('active_policy_version', 'integer')
        .addColumn('active_policy_mode', 'text')
        .addColumn('created_at', t.time, (c) => c.notNull())
        .addColumn('updated_at', t.time, (c) => c.notNull())
        .addColumn('deleted_at', t.time)
        .addPrimaryKeyConstraint('agents_pk', ['org_id', 'id'])
        .addUniqueConstraint('agents_slug_uq', ['org_id', 'slug'])
        .execute();

      await db.schema
        .createTable('audit_log')
        .addColumn('org_id', t.uuid, (c) => c.notNull())
        .addColumn('id', t.uuid, (c) => c.notNull())
        .addColumn('actor_type', 'text', (c) => c.notNull())
        .addColumn('actor_id', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('target_type', 'text', (c) => c.notNull())
        .addColumn('target_id', 'text', (c) => c.notNull())
        .addColumn('reason', 'text')
        .addColumn('details', 'text')
        .addColumn('created_at', t.time, (c) => c.notNull())
        .addPrimaryKeyConstraint('audit_log_pk', ['org_id', 'id'])
        .execute();
    },
  };
};
