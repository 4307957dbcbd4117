import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { buildApiApp } from './app.js';
import type { Config } from './config.js';
import { createDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { stopWorkers } from './lib/lifecycle.js';
import { composeService } from './service.js';

/**
 * The main host's OpenAPI 3.1 document, generated from the route schemas of an app that is built
 * but never listens. The app runs on an in-memory store and a throw-away DATA_DIR, so generating
 * the document touches neither the operator's data nor their secrets.
 */
export async function generateOpenApiDocument(config: Config): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'corral-openapi-'));
  const db = createDatabase({ sqliteFile: ':memory:' });
  const log = pino({ level: 'silent' });
  try {
    await migrateToLatest(db);
    const isolated: Config = { ...config, dataDir, databaseUrl: undefined, jwt: { ...config.jwt, secret: undefined, jwksUrl: undefined } };
    const container = await composeService(isolated, db, log);
    const { app } = await buildApiApp({ container, logger: undefined, bodyLimitBytes: config.bodyLimitBytes });
    try {
      await app.ready();
      return app.swagger() as unknown as Record<string, unknown>;
    } finally {
      await app.close();
      await stopWorkers(container.workers, log);
    }
  } finally {
    await db.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
