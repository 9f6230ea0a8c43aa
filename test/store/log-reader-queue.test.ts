/**
 * The log reader thread runs one read at a time; a read past its bound is stopped by ending the thread.
 * Each answer goes to the read it belongs to, whatever the timing.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { startSqliteLogReader, type SqliteLogReader } from '../../src/store/sqlite-log-reader.js';

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
