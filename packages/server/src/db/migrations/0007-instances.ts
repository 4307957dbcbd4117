import type { Kysely, Migration } from 'kysely';
import type { DialectName } from '../dialect/types.js';
import { columnTypes } from './column-types.js';

/**
 * SDK instances and the state each has applied (docs/sdk.md). One row per (agent, instance),
 * written by the instance's reports; `id` (UUIDv7, from the first report) orders the list.
 */
export const instances = (dialect: DialectName): Migration => {
  const t = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('agent_instances')
        .addColumn('org_id', t.uuid, (c) => c.notNull())
        .addColumn('agent_id', t.uuid, (c) => c.notNull())
        .addColumn('instance_id', 'text', (c) => c.notNull())
        .addColumn('id', t.uuid, (c) => c.notNull())
        .addColumn('hostname', 'text', (c) => c.notNull())
        .addColumn('sdk_version', 'text', (c) => c.notNull())
        .addColumn('transport', 'text', (c) => c.notNull())
        .addColumn('applied_at', t.time)
        .addColumn('policy_version', 'integer')
        .addColumn('policy_sequence', 'integer')
        .addColumn('policy_hash', 'text')
        .addColumn('kill_switch_active', 'integer', (c) => c.notNull())
        .addColumn('last_seen_at', t.time, (c) => c.notNull())
        .addPrimaryKeyConstraint('agent_instances_pk', ['org_id', 'agent_id', 'instance_id'])
        .execute();
      await db.schema.createIndex('agent_instances_list_idx').on('agent_instances').columns(['org_id', 'agent_id', 'id']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('agent_instances').execute();
    },
  };
};
