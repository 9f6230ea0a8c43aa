/**
 * The log's list and search reads on SQLite run on a thread of their own: a search scanning a large
 * workspace leaves the event loop free, and a read past its time bound is stopped.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQLITE_FILE } from '../../src/store/connect.js';
import { openStore, type Store } from '../../src/store/index.js';
import { STOP_POINT, startSqliteLogReader } from '../../src/store/sqlite-log-reader.js';
import { logRecord } from './store-contract.js';

const RECORDS = 100_000;
const BATCH = 5_000;

describe('log search on SQLite', () => {
  let dataDir: string;
  let store: Store;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'log-reader-'));
    store = await openStore({ dataDir, masterKey: randomBytes(32) });
    const metadata = Object.fromEntries(
      Array.from({ length: 16 }, (_, index) => [`key${index}`, `Value-${index}-ÀBCDEFGH`]),
    );
    for (let start = 0; start < RECORDS; start += BATCH) {
      await store.insertLogs(
        Array.from({ length: BATCH }, (_, index) =>
          logRecord('ws', { created_at_ms: start + index, metadata }),
        ),
      );
    }
    await store.insertLogs([logRecord('ws', { created_at_ms: 0, metadata: { team: 'ÉQUIPE-Rare' } })]);
  }, 300_000);

  afterAll(async () => {
    await store.close();
  });

  it('leaves the event loop free while it scans 100,000 records', async () => {
    const started = performance.now();
    let searched: number | undefined;
    const searching = store
      .listLogs({ workspace_id: 'ws', limit: 50, search: 'no-such-text' })
      .finally(() => (searched = performance.now()));
    // A timer and a read of the main connection are answered while the search runs.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const other = await store.getLog('ws', 'log_none');
    const answered = performance.now();
    expect(other).toBeUndefined();
    expect(await searching).toEqual({ data: [], has_more: false });
    expect(answered - started).toBeLessThan(250);
    expect(searched! - started).toBeGreaterThan(answered - started);
  }, 120_000);

  it('finds text in any case through the reader thread', async () => {
    const page = await store.listLogs({ workspace_id: 'ws', limit: 50, search: 'équipe-rare' });
    expect(page.data.map((record) => record.metadata)).toEqual([{ team: 'ÉQUIPE-Rare' }]);
  }, 120_000);

  it('stops a read past its time bound, and reads on afterwards', async () => {
    const reader = startSqliteLogReader(join(dataDir, SQLITE_FILE), { timeoutMs: 2_000 });
    try {
      const endless = `with recursive n(i) as (select 1 union all select i + 1 from n where i < 1000000000) select count(*) as c from n where ${STOP_POINT}()`;
      await expect(reader.all(endless, [])).rejects.toMatchObject({ code: 'request_timeout', status: 408 });
      expect(await reader.all('select count(*) as c from logs where workspace_id = ?', ['ws'])).toEqual([
        { c: RECORDS + 1 },
      ]);
    } finally {
      await reader.close();
    }
  }, 60_000);
});
