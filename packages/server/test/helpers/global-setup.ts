import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { TestProject } from 'vitest/node';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

/**
 * Creates one throw-away PostgreSQL database for the run (test files then isolate themselves in
 * schemas inside it) and drops it afterwards. PostgreSQL tests run whenever a server answers;
 * CORRAL_TEST_REQUIRE_PG=1 (set by .ci/run and `npm run test:pg`) turns "no server" into a failure.
 */
declare module 'vitest' {
  export interface ProvidedContext {
    pgUrl: string | null;
  }
}

const adminUrl = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function reachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

export default async function setup(project: TestProject) {
  // Tests that start the service or the CLI as a process run the build, as users do: bring it
  // up to date once (incremental, a few seconds when nothing changed).
  execFileSync(process.execPath, [path.join(repoRoot, 'node_modules/typescript/bin/tsc'), '-b'], { cwd: repoRoot, stdio: 'inherit' });
  if (!(await reachable(adminUrl))) {
    if (process.env.CORRAL_TEST_REQUIRE_PG === '1') {
      throw new Error(`PostgreSQL is required (CORRAL_TEST_REQUIRE_PG=1) but ${adminUrl.replace(/:[^:@/]*@/, ':***@')} does not answer`);
    }
    process.stderr.write('PostgreSQL not reachable: running the SQLite half only\n');
    project.provide('pgUrl', null);
    return;
  }
  const name = `corral_test_${Date.now()}_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  project.provide('pgUrl', url.toString());

  return async () => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.end();
  };
}
