/**
 * The SQLite file is put in WAL mode, which lets the log reader thread read while the log thread writes;
 * where SQLite answers another journal mode the page query stays on the main connection.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { useWal } from '../../src/store/connect.js';
import { startSqliteLogReader } from '../../src/store/sqlite-log-reader.js';

it('says whether SQLite put the database in WAL mode', () => {
  const file = new Database(join(mkdtempSync(join(tmpdir(), 'sqlite-wal-')), 'gateway.db'));
  const memory = new Database(':memory:');
  try {
    expect(useWal(file)).toBe(true);
    // An in-memory database keeps its journal in memory: SQLite answers `memory`, not `wal`.
    expect(useWal(memory)).toBe(false);
  } finally {
    file.close();
    memory.close();
  }
});

it("opens the reader thread's connection read-only", async () => {
  const missing = join(mkdtempSync(join(tmpdir(), 'sqlite-wal-')), 'gateway.db');
  const reader = startSqliteLogReader(missing);
  try {
    // A read-write connection would have created the file.
    await expect(reader.all('select 1 as a', [])).rejects.toThrow();
    expect(existsSync(missing)).toBe(false);
  } finally {
    await reader.close();
  }
});
