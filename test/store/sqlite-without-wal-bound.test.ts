/**
 * Where SQLite keeps the rollback journal there is no reader thread: log searches and analytics queries
 * run on the main connection. They are bound as on the reader threads: a read past its bound is stopped at
 * its next stop point (a 408), and a read whose request ended is dropped.
 *
 * WAL is refused as sqlite-without-wal.test.ts refuses it: better-sqlite3 can choose no VFS without shared
 * memory, so the driver's class answers the pragma with the mode in force, as SQLite does there.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { SQLITE_FILE } from '../../src/store/connect.js';
import { openStore, type Store } from '../../src/store/index.js';
import { ROLLUP_COLUMNS, ROLLUP_SUM_COLUMNS } from '../../src/store/rollups.js';
import { MAX_QUEUED_READS } from '../../src/store/sqlite-log-reader.js';
import type { AnalyticsQuery } from '../../src/store/types.js';

vi.mock('better-sqlite3', async (importOriginal) => {
  const { default: Driver } = await importOriginal<{ default: typeof import('better-sqlite3') }>();
  class WithoutSharedMemory extends Driver {
    override pragma(source: string, options?: { simple?: boolean }): unknown {
      if (/^journal_mode\s*=\s*wal$/i.test(source.trim())) return super.pragma('journal_mode', options);
      return super.pragma(source, options);
    }
  }
  return { default: WithoutSharedMemory };
});

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

/** Writes through a connection of its own, as another process would. */
function write(sql: string, ...parameters: unknown[]): void {
  const db = new Database(join(dataDir, SQLITE_FILE));
  try {
    db.pragma('busy_timeout = 5000');
    db.prepare(sql).run(...parameters);
  } finally {
    db.close();
  }
}

/** Records 1 to `count` whose metadata holds an escaped line break: a search parses every one's JSON. */
function seed(count: number): void {
  const pairs = Array.from(
    { length: 16 },
    (_, index) => `'key${index}', 'line-${index}' || char(10) || 'value-' || i`,
  ).join(', ');
  write(
    `with recursive n(i) as (select 1 union all select i + 1 from n where i < ?)
     insert into logs (id, created_at_ms, workspace_id, trace_id, span_id, method, path, endpoint, status,
       is_attempt, stream, latency_ms, retry_count, metadata)
     select 'log_' || i, i, 'ws', 'trace-' || i, 'span-' || i, 'POST', '/v1/chat/completions',
       'chat.completions', 200, 0, 0, 1.5, 0, json_object(${pairs}) from n`,
    count,
  );
}

/** The code a read was refused with, or 'answered'. */
function outcome(read: Promise<unknown>): Promise<string> {
  return read.then(
    () => 'answered',
    (error: { code?: string }) => error.code ?? String(error),
  );
}

it('stops a search on the main connection at its bound', async () => {
  // A search that matches none of 120,000 such records runs for seconds.
  seed(120_000);
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
  const sums = ROLLUP_SUM_COLUMNS.map((column) => (column === 'requests' ? 'u.i' : '0')).join(', ');
  // Summing 300,000 rollup rows of 2,000 users runs for seconds.
  const users = 2_000;
  write(
    `with recursive u(i) as (select 1 union all select i + 1 from u where i < ?),
       h(i) as (select 0 union all select i + 1 from h where i < ? - 1)
     insert into log_rollups (${ROLLUP_COLUMNS.map((c) => `"${c}"`).join(', ')})
     select 'ws', 'hour', h.i * 3600000, 'openai', 'gpt-4o', 'key', '', 2, '_user', 'user-' || u.i, ${sums}
     from u, h`,
    users,
    hours,
  );
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
