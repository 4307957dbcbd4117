import type { Kysely, Migration } from 'kysely';
import type { DialectName } from '../dialect/types.js';
import { columnTypes } from './column-types.js';

/**
 * An SDK instance that closes says so in its last report, so people see it as no longer
 * connected at once instead of after three missed heartbeats. `closed_at` is set by that report
 * and cleared by any later one. A nullable column: older processes neither read nor write it,
 * so the migration is safe under a rolling deploy.
 */
export const instanceClosed = (dialect: DialectName): Migration => {
  const t = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('agent_instances').addColumn('closed_at', t.time).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('agent_instances').dropColumn('closed_at').execute();
    },
  };
};
