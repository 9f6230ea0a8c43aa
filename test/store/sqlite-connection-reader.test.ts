/**
 * The reader of the main connection (where SQLite has no WAL) takes the connection for the reads it runs
 * only: a read dropped while it waits (its request ended, or its bound passed) never takes it.
 */
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterEach, expect, it, vi } from 'vitest';
import type { ReadStop } from '../../src/store/connect.js';
import type { Database as Schema } from '../../src/store/schema.js';
import { startSqliteConnectionReader } from '../../src/store/sqlite-connection-reader.js';
import { MAX_QUEUED_READS } from '../../src/store/sqlite-log-reader.js';
import { outcome } from '../helpers/log-reads.js';

let db: Kysely<Schema> | undefined;

afterEach(async () => {
  await db?.destroy();
  db = undefined;
});

it('never takes the connection for a read dropped while it waits', async () => {
  db = new Kysely<Schema>({ dialect: new SqliteDialect({ database: new Database(':memory:') }) });
  const stop: ReadStop = { at: Infinity };
  const reader = startSqliteConnectionReader(db, stop);
  const taken = vi.spyOn(db, 'connection');
  // Another query holds the connection meanwhile.
  let release!: () => void;
  let holding!: () => void;
  const holds = new Promise<void>((resolve) => (holding = resolve));
  const held = db.connection().execute(
    () =>
      new Promise<void>((resolve) => {
        release = resolve;
        holding();
      }),
  );
  await holds;
  const first = outcome(reader.all('select 1 as one', []));
  // Many times the queue's worth of reads, each dropped at once: none is refused, none stays queued.
  const dropped: Promise<string>[] = [];
  for (let round = 0; round < 4; round++) {
    const ended = new AbortController();
    for (let index = 0; index < MAX_QUEUED_READS; index++) {
      dropped.push(outcome(reader.all('select 1 as one', [], { signal: ended.signal })));
    }
    ended.abort(new Error('the client went away'));
  }
  expect(await Promise.all(dropped)).toEqual(Array(dropped.length).fill('Error: the client went away'));
  release();
  await held;
  expect(await first).toBe('answered');
  await reader.close();
  // The holder and the one read answered: the dropped reads never asked for the connection.
  expect(taken).toHaveBeenCalledTimes(2);
});
