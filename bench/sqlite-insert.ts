/**
 * The floor under SQLite ingest: `npm run bench -- sqlite-insert [--batches 300] [--repeat 3]`.
 *
 * Stores 1,000-event batches, one transaction each, into a fresh database file in a temp dir,
 * for several shapes of the event table, with the same prepared single-row insert the writer
 * thread uses (positional arguments), and prints microseconds per event (the best of
 * --repeat runs, each the mean over its batches after the first 10%). The first row is the
 * service's own writer (telemetry-sqlite-batch.ts) on the real schema, rollups included;
 * the others isolate the event table: what each index costs, and what a table with no index
 * at all costs, which no design that keeps one row per event can go below.
 */
import Sqlite from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createDatabase } from '../packages/server/src/db/database.js';
import { migrateToLatest } from '../packages/server/src/db/migrate.js';
import { openSqlite } from '../packages/server/src/db/sqlite-connection.js';
import type { EventRow } from '../packages/server/src/features/telemetry/rollup-fold.js';
import { prepareSqliteBatchWrite } from '../packages/server/src/features/telemetry/telemetry-sqlite-batch.js';
import { flag, load, machine, table } from './_bench-kit.js';

const batches = Number(flag('batches', '300'));
const repeat = Number(flag('repeat', '3'));
const BATCH = 1000;

const columns = `org_id TEXT NOT NULL, ts BIGINT NOT NULL, request_id TEXT NOT NULL, agent_id TEXT NOT NULL, method TEXT NOT NULL,
  url_host TEXT NOT NULL, url_path TEXT NOT NULL, status_code INTEGER, latency_ms INTEGER, policy_result TEXT NOT NULL,
  deny_reason TEXT, trace_id TEXT, span_id TEXT, gen_ai TEXT, received_at BIGINT NOT NULL`;
const shapes: Record<string, string> = {
  'events only: no index': `CREATE TABLE e (${columns})`,
  '+ unique (org_id, request_id)': `CREATE TABLE e (${columns}); CREATE UNIQUE INDEX e_rq ON e (org_id, request_id)`,
  '+ key (org_id, ts, request_id)': `CREATE TABLE e (${columns}, PRIMARY KEY (org_id, ts, request_id));
    CREATE UNIQUE INDEX e_rq ON e (org_id, request_id)`,
  '+ (org_id, agent_id, ts): the service\'s shape': `CREATE TABLE e (${columns}, PRIMARY KEY (org_id, ts, request_id));
    CREATE UNIQUE INDEX e_rq ON e (org_id, request_id); CREATE INDEX e_agent ON e (org_id, agent_id, ts)`,
  'same, WITHOUT ROWID': `CREATE TABLE e (${columns}, PRIMARY KEY (org_id, ts, request_id)) WITHOUT ROWID;
    CREATE UNIQUE INDEX e_rq ON e (org_id, request_id); CREATE INDEX e_agent ON e (org_id, agent_id, ts)`,
};

const orgId = randomUUID();
const agents = Array.from({ length: 10 }, () => randomUUID());
let sequence = 0;
/** A batch like the ingest benchmark's: one timestamp, request ids in arrival order, ten agents, twenty hosts. */
function batch(): EventRow[] {
  const ts = Date.now();
  return Array.from({ length: BATCH }, (_, i) => ({
    org_id: orgId, ts, request_id: `req-${String(++sequence).padStart(10, '0')}`, agent_id: agents[i % 10]!, method: 'GET',
    url_host: `api${i % 20}.example.com`, url_path: `/v1/resources/{id}/items/${i % 7}`, status_code: 200,
    latency_ms: 5 + ((i * 7919) % 400), policy_result: i % 25 === 0 ? 'denied' : 'allowed', deny_reason: i % 25 === 0 ? `rule-${i % 5}` : null,
    trace_id: null, span_id: null, gen_ai: null, received_at: ts,
  }));
}

/** Mean ms per batch over the batches after the first 10%. */
function timeBatches(write: (rows: EventRow[]) => void): number {
  const times: number[] = [];
  for (let b = 0; b < batches; b++) {
    const rows = batch();
    const start = performance.now();
    write(rows);
    times.push(performance.now() - start);
  }
  const kept = times.slice(Math.floor(batches / 10));
  return kept.reduce((a, t) => a + t, 0) / kept.length;
}

async function serviceWriter(file: string): Promise<number> {
  const db = createDatabase({ sqliteFile: file });
  await migrateToLatest(db);
  await db.close();
  const sqlite = openSqlite(file);
  try {
    const write = prepareSqliteBatchWrite(sqlite);
    return timeBatches((rows) => void write(rows));
  } finally {
    sqlite.close();
  }
}

function shape(file: string, ddl: string): number {
  const sqlite = openSqlite(file);
  try {
    sqlite.exec(ddl);
    const insert = sqlite.prepare('INSERT INTO e VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING');
    const transaction = sqlite.transaction((rows: EventRow[]) => {
      for (const r of rows) {
        insert.run(r.org_id, r.ts, r.request_id, r.agent_id, r.method, r.url_host, r.url_path, r.status_code, r.latency_ms,
          r.policy_result, r.deny_reason, r.trace_id, r.span_id, r.gen_ai, r.received_at);
      }
    });
    return timeBatches((rows) => transaction.immediate(rows));
  } finally {
    sqlite.close();
  }
}

async function best(run: (file: string) => number | Promise<number>): Promise<number> {
  let fastest = Infinity;
  for (let i = 0; i < repeat; i++) {
    const dir = mkdtempSync(path.join(tmpdir(), 'corral-bench-sqlite-'));
    try {
      fastest = Math.min(fastest, await run(path.join(dir, 'bench.sqlite')));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return fastest;
}

console.log(`machine: ${machine()}, SQLite ${new Sqlite(':memory:').prepare('select sqlite_version() AS v').pluck().get() as string}; load average before: ${load()}`);
console.log(`${batches} batches of ${BATCH} events per run, best of ${repeat} runs, database file in ${tmpdir()}`);
const rows: Array<Record<string, string | number>> = [];
const perEvent = (msPerBatch: number) => ({ 'µs per event': (msPerBatch * 1000 / BATCH).toFixed(1), 'events/s': Math.round((BATCH * 1000) / msPerBatch) });
rows.push({ shape: 'service writer: real schema, rollups included', ...perEvent(await best(serviceWriter)) });
for (const [name, ddl] of Object.entries(shapes)) rows.push({ shape: name, ...perEvent(await best((file) => shape(file, ddl))) });
console.log(table(rows));
console.log(`load average after: ${load()}`);
