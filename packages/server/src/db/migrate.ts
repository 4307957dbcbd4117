import { Migrator, sql, type MigrationResultSet } from 'kysely';
import type { Db } from './database.js';
import { migrations } from './migrations/index.js';

/**
 * Brings the schema up to date. Kysely's migrator takes a lock (an advisory lock on
 * PostgreSQL), so several processes starting together migrate once.
 */
export async function migrateToLatest(db: Db): Promise<MigrationResultSet> {
  // Kysely looks for its lock table in every schema it can see; when several deployments (or
  // test runs) share a database in different schemas it would find another's and never create
  // its own. Naming the schema keeps each one to itself.
  const schema = db.dialect.name === 'postgres'
    ? (await sql<{ s: string }>`SELECT current_schema() AS s`.execute(db.kysely)).rows[0]?.s
    : undefined;
  const migrator = new Migrator({
    db: db.kysely,
    provider: { getMigrations: async () => migrations(db.dialect.name) },
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error instanceof Error ? result.error : new Error('Migration failed', { cause: result.error });
  return result;
}
