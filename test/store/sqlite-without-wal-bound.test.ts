/**
 * Where SQLite keeps the rollback journal there is no reader thread: log searches and analytics queries
 * run on the main connection. They are bound as on the reader threads: a read past its bound is stopped at
 * its next stop point (a 408), and a read whose request ended is dropped.
 *
 * WAL is refused as sqlite-without-wal.test.ts refuses it (helpers/sqlite-without-wal.ts).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { SQLITE_FILE } from '../../src/store/connect.js';
import { openStore, type Store } from '../../src/store/index.js';
import { MAX_QUEUED_READS } from '../../src/store/sqlite-log-reader.js';
import type { AnalyticsQuery } from '../../src/store/types.js';
import { outcome, seedRecords, seedUserRollups } from '../helpers/log-reads.js';

vi.mock('better-sqlite3', async (importOriginal) =>
  (await import('../helpers/sqlite-without-wal.js')).withoutWal(await importOriginal()),
);

const BOUND_MS = 300;
const HOUR = 3_600_000;

let dataDir: string;
let store: Store;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'sqlite-without-wal-bound-'));
  store = await openStore({ dataDir, masterKey: randomBytes(32), readTimeoutMs: BOUND_MS });
  // The rollback journal: the header's read and write versions are 1 (WAL's are 2).
  expect([...readFileSync(join(dataDir, SQLITE_FILE)).subarray(18, 20)]).toEqual([1, 1]);
});

afterAll(async () => {
  await store?.close();
});

it('stops a search on the main connection at its bound', async () => {
  // A search that matches none of 120,000 such records runs for seconds.
  seedRecords(dataDir, 0, 120_000);
  let stopped: { code?: string; status?: number; message?: string } | undefined;
  const started = performance.now();
  await store.listLogs({ workspace_id: 'ws', limit: 50, search: 'no-such-text' }).catch((error) => {
    stopped = error as typeof stopped;
  });
  const took = performance.now() - started;
  expect(stopped).toMatchObject({ code: 'request_timeout', status: 408 });
  expect(stopped?.message).toContain('from_ms');
  // Stopped at its bound, not run to its end.
  expect(took).toBeLessThan(BOUND_MS + 700);
  // The connection reads on: a narrow search, and a listing by time alone.
  const found = await store.listLogs({
    workspace_id: 'ws',
    limit: 5,
    search: 'line-3',
    from_ms: 1,
    to_ms: 2,
  });
  expect(found.data.map((record) => record.id)).toEqual(['log_2', 'log_1']);
  expect((await store.listLogs({ workspace_id: 'ws', limit: 1 })).data).toHaveLength(1);
}, 120_000);

it('stops an analytics query on the main connection at its bound', async () => {
  const hours = 150;
  const query = {
    workspace_ids: ['ws'],
    period: 'hour',
    from_ms: 0,
    to_ms: hours * HOUR,
    group_by: { metadata: '_user' },
    filters: {},
    group_limit: 10,
  } satisfies AnalyticsQuery;
  // Summing 300,000 rollup rows of 2,000 users runs for seconds.
  const users = 2_000;
  seedUserRollups(dataDir, 0, users, hours);
  let stopped: { code?: string; status?: number; message?: string } | undefined;
  const started = performance.now();
  await store.analytics(query).catch((error) => {
    stopped = error as typeof stopped;
  });
  const took = performance.now() - started;
  expect(stopped).toMatchObject({ code: 'request_timeout', status: 408 });
  expect(stopped?.message).toContain('analytics');
  expect(took).toBeLessThan(BOUND_MS + 700);
  // One user's hour is answered.
  const hour = await store.analytics({
    ...query,
    to_ms: HOUR,
    group_by: undefined,
    group_limit: undefined,
    filters: { metadata: { key: '_user', value: `user-${users}` } },
  });
  expect(hour.map((row) => row.requests)).toEqual([users]);
}, 120_000);

it('drops a waiting read whose request ended, and refuses one past the queue', async () => {
  const ended = new AbortController();
  const reads = Array.from({ length: MAX_QUEUED_READS + 1 }, (_, index) =>
    outcome(
      store.listLogs(
        { workspace_id: 'ws', limit: 1, search: 'line-1', from_ms: 1, to_ms: 1 },
        index === 1 ? { signal: ended.signal } : {},
      ),
    ),
  );
  const refused = outcome(
    store.listLogs({ workspace_id: 'ws', limit: 1, search: 'x', from_ms: 1, to_ms: 1 }),
  );
  ended.abort(new Error('the client went away'));
  expect(await refused).toBe('rate_limited');
  const outcomes = await Promise.all(reads);
  expect(outcomes[1]).toBe('Error: the client went away');
  expect(outcomes.filter((answer) => answer === 'answered')).toHaveLength(MAX_QUEUED_READS);
});

it('close rejects the reads still waiting instead of running one to its bound', async () => {
  // Each of these searches would run to its bound, on the event loop.
  const reads = Array.from({ length: 6 }, () =>
    outcome(store.listLogs({ workspace_id: 'ws', limit: 50, search: 'no-such-text' })),
  );
  const started = performance.now();
  await store.close();
  const took = performance.now() - started;
  store = undefined as unknown as Store;
  expect(await Promise.all(reads)).toEqual(Array(6).fill('Error: The log reader is closed'));
  expect(took).toBeLessThan(BOUND_MS / 2);
}, 60_000);
