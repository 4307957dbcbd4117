import type { Kysely, Migration } from 'kysely';
import type { DialectName } from '../dialect/types.js';
import { columnTypes } from './column-types.js';

export const controlPlane = (dialect: DialectName): Migration => {
  const t = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>) {
      // Versions are immutable once written; activation lives on the agent row
      // (agents.active_policy_version / active_policy_mode), so "which is active" is one write.
      await db.schema
        .createTable('policy_versions')
        .addColumn('org_id', t.uuid, (c) => c.notNull())
        .addColumn('agent_id', t.uuid, (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('id', t.uuid, (c) => c.notNull())
        .addColumn('hash', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('document', t.json, (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('created_at', t.time, (c) => c.notNull())
        .addColumn('activated_at', t.time)
        .addPrimaryKeyConstraint('policy_versions_pk', ['org_id', 'agent_id', 'version'])
        .execute();

      // The service's own Ed25519 public keys, not an organization's: a reference table (on Citus,
      // replicated to every node), the one table without org_id. Rows let every process list the
      // keys of every other process and keep a retired key listed while its envelopes may live.
      await db.schema
        .createTable('signing_keys')
        .addColumn('keyid', 'text', (c) => c.primaryKey())
        .addColumn('algorithm', 'text', (c) => c.notNull())
        .addColumn('public_key', 'text', (c) => c.notNull())
        .addColumn('created_at', t.time, (c) => c.notNull())
        .addColumn('last_used_at', t.time, (c) => c.notNull())
        .execute();
    },
  };
};
