import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createDatabase } from '../../db/database.js';
import { createTestDb, sqliteOf, type TestDb } from '../../../test/helpers/test-databases.js';
import type { Worker } from '../../lib/lifecycle.js';
import type { EventRow } from './rollup-fold.js';
import { createSqliteTelemetryWriter } from './telemetry-sqlite-writer.js';

const now = Date.now();
const orgId = randomUUID();
const agentId = randomUUID();
const rowsOf = (prefix: string, n: number): EventRow[] => Array.from({ length: n }, (_, i) => ({
  org_id: orgId, ts: now + i, request_id: `${prefix}-${i}`, agent_id: agentId, method: 'GET', url_host: 'api.example.com',
  url_path: '/v1/items', status_code: 200, latency_ms: 10 + (i % 50), policy_result: 'allowed', deny_reason: null,
  trace_id: null, span_id: null, gen_ai: null, received_at: now,
}));

const countEvents = async (testDb: TestDb) =>
  Number((await sql<{ n: number }>`SELECT count(*) AS n FROM telemetry_events`.execute(testDb.db.kysely)).rows[0]?.n);

describe('SQLite telemetry writer', () => {
  let testDb: TestDb | undefined;
  const writers: Worker[] = [];
  const writerOn = (db: TestDb) => {
    const writer = createSqliteTelemetryWriter(sqliteOf(db));
    writers.push(writer);
    return writer;
  };
  afterEach(async () => {
    for (const writer of writers.splice(0)) await writer.stop();
    await testDb?.close();
    testDb = undefined;
  });

  it('stores on its own thread for a file database, so the event loop keeps turning during a write', async () => {
    testDb = await createTestDb('sqlite-file');
    const writer = writerOn(testDb);
    let turns = 0;
    const ticker = setInterval(() => turns++, 1);
    const turnsBefore = turns;
    try {
      // Tens of milliseconds of B-tree work: in the calling thread no timer could fire meanwhile.
      const stored = await writer.write(rowsOf('big', 20_000));
      expect(stored).toHaveLength(20_000);
    } finally {
      clearInterval(ticker);
    }
    expect(turns - turnsBefore).toBeGreaterThanOrEqual(3);
    expect(await countEvents(testDb)).toBe(20_000);
  });

  it('answers the rows it stored: known request_ids and repeats within a batch are skipped', async () => {
    for (const kind of ['sqlite', 'sqlite-file'] as const) {
      const db = await createTestDb(kind);
      try {
        const writer = writerOn(db);
        const first = rowsOf(`dup-${kind}`, 3);
        expect(await writer.write(first)).toEqual(first);
        const again = [first[1]!, ...rowsOf(`new-${kind}`, 2), { ...rowsOf(`new-${kind}`, 1)[0]!, ts: now + 99 }];
        expect(await writer.write(again)).toEqual([again[1], again[2]]);
        expect(await countEvents(db)).toBe(5);
      } finally {
        await db.close();
      }
    }
  });

  it("passes the driver's error back from the thread and leaves nothing of the failed batch", async () => {
    testDb = await createTestDb('sqlite-file');
    const writer = writerOn(testDb);
    await writer.write(rowsOf('warm', 1));
    await sql`ALTER TABLE telemetry_host_rollups RENAME TO host_rollups_away`.execute(testDb.db.kysely);
    await expect(writer.write(rowsOf('fails', 10))).rejects.toMatchObject({ message: expect.stringMatching(/telemetry_host_rollups/) });
    await sql`ALTER TABLE host_rollups_away RENAME TO telemetry_host_rollups`.execute(testDb.db.kysely);
    expect(await countEvents(testDb)).toBe(1);
    expect(await writer.write(rowsOf('fails', 10))).toHaveLength(10);
  });

  it('finishes the batches in flight when it stops, and refuses batches afterwards', async () => {
    testDb = await createTestDb('sqlite-file');
    const file = testDb.sqliteFile!;
    const writer = writerOn(testDb);
    const writes = Array.from({ length: 5 }, (_, b) => writer.write(rowsOf(`close-${b}`, 500)));
    await writer.stop();
    await testDb.db.close();
    expect((await Promise.all(writes)).map((w) => w.length)).toEqual([500, 500, 500, 500, 500]);
    await expect(writer.write(rowsOf('late', 1))).rejects.toThrow(/stopped/);
    const reopened = createDatabase({ sqliteFile: file });
    try {
      expect(Number((await sql<{ n: number }>`SELECT count(*) AS n FROM telemetry_events`.execute(reopened.kysely)).rows[0]?.n)).toBe(2_500);
    } finally {
      await reopened.close();
    }
  });
});
