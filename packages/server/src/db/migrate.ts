import { Migrator, type MigrationResultSet } from 'kysely';
import type { Db } from './database.js';
import { migrations } from './migrations/index.js';

/**
 * Brings the schema up to date. Kysely's migrator takes a lock (an advisory lock on
 * PostgreSQL), so several processes starting together migrate once.
 */
export async function migrateToLatest(db: Db): Promise<MigrationResultSet> {
  const migrator = new Migrator({
    db: db.kysely,
    provider: { getMigrations: async () => migrations(db.dialect.name) },
  });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  return result;
}
