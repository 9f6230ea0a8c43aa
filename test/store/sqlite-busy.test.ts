/**
 * A SQLite query that finds the file's write lock taken waits without stopping the event loop, says so
 * once (the store raises the log thread's priority then), and goes through once the lock is free.
 * The job queue's idle polls take no write lock at all.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { connect, SQLITE_FILE } from '../../src/store/connect.js';
import { openStore } from '../../src/store/index.js';

let dataDir: string;

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'sqlite-busy-'));
});

afterEach(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

it('waits for the write lock asynchronously, then writes', async () => {
  let busy = 0;
  const { db } = await connect({ dataDir, onSqliteBusy: () => (busy += 1) });
  await sql`create table t (v integer)`.execute(db);

  // Another connection, on this same thread, holds the write lock. A busy handler that slept would
  // block this thread, so the other connection could never commit.
  const other = new Database(join(dataDir, SQLITE_FILE));
  other.exec('begin immediate');
  other.exec('insert into t values (1)');

  let settled = false;
  const write = sql`insert into t values (2)`.execute(db).then(() => (settled = true));
  const transaction = db.transaction().execute(async (trx) => {
    await sql`insert into t values (3)`.execute(trx);
  });
  // The event loop goes on while both wait.
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(settled).toBe(false);
  expect(busy).toBe(1);

  other.exec('commit');
  await write;
  await transaction;
  const rows = await sql<{ v: number }>`select v from t order by v`.execute(db);
  expect(rows.rows.map((row) => row.v)).toEqual([1, 2, 3]);
  other.close();
  await db.destroy();
});

it('an idle poll of the job queue takes no write lock; a claim with work waits for it', async () => {
  const store = await openStore({ dataDir, masterKey: Buffer.alloc(32, 7) });
  const kinds = ['test.idle-poll'];
  const other = new Database(join(dataDir, SQLITE_FILE));
  try {
    // Another connection holds the write lock, as the log thread does for each batch of records.
    other.exec('begin immediate');
    // Nothing is due: the poll answers at once, though the lock is taken.
    expect(await store.jobs.claim({ kinds, owner: 'node-a', leaseMs: 1_000 })).toEqual([]);
    other.exec('commit');

    const job = await store.jobs.enqueue({ kind: kinds[0], payload: { n: 1 } });
    other.exec('begin immediate');
    let claimed: unknown[] | undefined;
    const claim = store.jobs
      .claim({ kinds, owner: 'node-a', leaseMs: 1_000 })
      .then((jobs) => (claimed = jobs));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(claimed).toBeUndefined();
    other.exec('commit');
    await claim;
    expect(claimed).toMatchObject([{ id: job.id, status: 'running', lease_owner: 'node-a' }]);
  } finally {
    other.close();
    await store.close();
  }
});
