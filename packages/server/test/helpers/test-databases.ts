import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { createDatabase, type Db, type SqliteDb } from '../../src/db/database.js';
import type { DialectName } from '../../src/db/dialect/types.js';
import { migrateToLatest } from '../../src/db/migrate.js';

/** Every store and API test runs once per engine available to this run. */
export const pgUrl = inject('pgUrl');
export const testDialects: DialectName[] = pgUrl ? ['sqlite', 'postgres'] : ['sqlite'];

/**
 * Store kinds: an engine, or SQLite in a file. The file is what production runs, and the
 * telemetry writer then stores batches on its own thread and connection; in memory it runs in
 * the calling thread. The telemetry tests run on every kind.
 */
export type TestStoreKind = DialectName | 'sqlite-file';
export const telemetryTestStores: TestStoreKind[] = [...testDialects, 'sqlite-file'];
export const dialectOf = (kind: TestStoreKind): DialectName => (kind === 'sqlite-file' ? 'sqlite' : kind);

/** The SQLite half of a test store, for tests of SQLite's own adapters. */
export function sqliteOf(testDb: TestDb): SqliteDb {
  if (testDb.db.engine !== 'sqlite') throw new Error('This test needs a SQLite store');
  return testDb.db;
}

export interface TestDb {
  db: Db;
  /** The connection string and schema, for tests that start a second process on the same store. */
  pg?: { url: string; schema: string };
  sqliteFile?: string;
  close(): Promise<void>;
}

/**
 * A fresh, migrated store: SQLite in memory (or a file when asked), or a new schema in the run's
 * PostgreSQL database, dropped on close.
 */
export async function createTestDb(kind: TestStoreKind, opts: { sqliteFile?: string } = {}): Promise<TestDb> {
  if (kind === 'sqlite-file') {
    const dir = mkdtempSync(path.join(tmpdir(), 'corral-test-'));
    const testDb = await createTestDb('sqlite', { sqliteFile: path.join(dir, 'corral.sqlite') });
    return { ...testDb, close: () => testDb.close().finally(() => rmSync(dir, { recursive: true, force: true })) };
  }
  const dialect = kind;
  if (dialect === 'sqlite') {
    const db = createDatabase({ sqliteFile: opts.sqliteFile ?? ':memory:' });
    await migrateToLatest(db);
    return { db, ...(opts.sqliteFile ? { sqliteFile: opts.sqliteFile } : {}), close: () => db.close() };
  }
  if (!pgUrl) throw new Error('PostgreSQL is not available in this run');
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const db = createDatabase({ databaseUrl: pgUrl, pgSchema: schema, poolSize: 5 });
  await migrateToLatest(db);
  return {
    db,
    pg: { url: pgUrl, schema },
    async close() {
      await db.close();
      const client = new pg.Client({ connectionString: pgUrl });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    },
  };
}
