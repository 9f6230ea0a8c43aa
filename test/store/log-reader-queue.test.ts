/**
 * The log reader thread runs one read at a time; a read past its bound is stopped by ending the thread.
 * Each answer goes to the read it belongs to, whatever the timing.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { STOP_POINT, startSqliteLogReader, type SqliteLogReader } from '../../src/store/sqlite-log-reader.js';

let file: string;
const readers: SqliteLogReader[] = [];

beforeEach(() => {
  file = join(mkdtempSync(join(tmpdir(), 'log-reader-queue-')), 'gateway.db');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec('create table t (x)');
  db.close();
});

afterEach(async () => {
  await Promise.all(readers.splice(0).map((reader) => reader.close()));
});

function reader(options: Parameters<typeof startSqliteLogReader>[1]): SqliteLogReader {
  const started = startSqliteLogReader(file, options);
  readers.push(started);
  return started;
}

/** Holds the main thread, as a large body's parse or a long collection would. */
function busyMainThread(ms: number): Promise<void> {
  return new Promise((done) =>
    setImmediate(() => {
      const until = Date.now() + ms;
      while (Date.now() < until) {
        // busy
      }
      done();
    }),
  );
}

it('gives an answer only to the read it belongs to when the main thread was busy past the bound', async () => {
  const logs = reader({ timeoutMs: 300 });
  await logs.all('select 1 as a', []);
  const reads = ['A', 'B', 'C'].map((who) =>
    logs.all<{ who: string }>('select ? as who', [who]).then(
      (rows) => rows.map((row) => row.who).join(),
      (error: { code?: string }) => error.code ?? String(error),
    ),
  );
  await busyMainThread(1_000);
  const answers = await Promise.all(reads);
  // A read answers with its own rows or is stopped; never with another read's rows.
  answers.forEach((answer, index) => expect(['ABC'[index], 'request_timeout']).toContain(answer));
}, 20_000);

// Endless; it calls the stop point for each row, as every query sent to the reader does.
const SLOW = `with recursive c(i) as (select 1 union all select i + 1 from c) select count(*) as n from c where ${STOP_POINT}()`;

it("bounds a read's wait from when it was queued, not from when it started", async () => {
  const logs = reader({ timeoutMs: 500 });
  const slowOnes = Array.from({ length: 4 }, () =>
    logs.all(SLOW, []).catch((error: { code?: string }) => error.code),
  );
  const started = Date.now();
  const quick = await logs.all('select 1 as a', []).catch((error: { code?: string }) => error.code);
  // Behind four reads of 500 ms each it waited 2.5 s; its own bound ends its wait.
  expect(Date.now() - started).toBeLessThan(1_500);
  expect(quick).toBe('request_timeout');
  expect(await Promise.all(slowOnes)).toEqual(Array(4).fill('request_timeout'));
  expect(await logs.all('select 2 as a', [])).toEqual([{ a: 2 }]);
}, 20_000);

it('drops a queued read whose request ended', async () => {
  const logs = reader({ timeoutMs: 2_000 });
  const slow = logs.all(SLOW, []).catch((error: { code?: string }) => error.code);
  const ended = new AbortController();
  const queued = logs.all('select 1 as a', [], { signal: ended.signal });
  const started = Date.now();
  ended.abort();
  await expect(queued).rejects.toThrow();
  expect(Date.now() - started).toBeLessThan(500);
  // An ended request's read is refused at once.
  await expect(logs.all('select 1 as a', [], { signal: ended.signal })).rejects.toThrow();
  expect(await slow).toBe('request_timeout');
}, 20_000);

it('refuses a read when 16 are already waiting', async () => {
  const logs = reader({ timeoutMs: 1_000 });
  const running = logs.all(SLOW, []).catch((error: { code?: string }) => error.code);
  const waiting = Array.from({ length: 16 }, () =>
    logs.all('select 1 as a', []).catch((error: { code?: string }) => error.code),
  );
  await expect(logs.all('select 1 as a', [])).rejects.toMatchObject({ code: 'rate_limited', status: 429 });
  await Promise.all([running, ...waiting]);
}, 20_000);

it("passes a search's signal to the reader thread", async () => {
  const store = await openStore({
    dataDir: mkdtempSync(join(tmpdir(), 'log-reader-signal-')),
    masterKey: randomBytes(32),
  });
  try {
    const ended = new AbortController();
    ended.abort(new Error('the client went away'));
    await expect(
      store.listLogs({ workspace_id: 'ws', limit: 10, search: 'a' }, { signal: ended.signal }),
    ).rejects.toThrow('the client went away');
    expect(await store.listLogs({ workspace_id: 'ws', limit: 10, search: 'a' })).toEqual({
      data: [],
      has_more: false,
    });
  } finally {
    await store.close();
  }
});
