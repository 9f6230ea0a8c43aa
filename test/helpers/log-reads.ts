/**
 * Set-up shared by the tests of the log's readers (log searches and analytics queries on SQLite): records
 * and rollup rows written through a connection of their own, as another process would, and the outcome of
 * a read.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SQLITE_FILE } from '../../src/store/connect.js';
import { ROLLUP_COLUMNS, ROLLUP_SUM_COLUMNS } from '../../src/store/rollups.js';

/** The code a read was refused with, or 'answered'. */
export function outcome(read: Promise<unknown>): Promise<string> {
  return read.then(
    () => 'answered',
    (error: { code?: string }) => error.code ?? String(error),
  );
}

/** Runs one statement on the store's file through a connection of its own. */
export function writeToFile(dataDir: string, sql: string, ...parameters: unknown[]): void {
  const db = new Database(join(dataDir, SQLITE_FILE));
  try {
    db.pragma('busy_timeout = 5000');
    db.prepare(sql).run(...parameters);
  } finally {
    db.close();
  }
}

/**
 * Records log_<from + 1> to log_<to> of workspace `ws`, created at their number, whose metadata holds 16
 * pairs with an escaped line break: a search parses every one's JSON (json_each).
 */
export function seedRecords(dataDir: string, from: number, to: number): void {
  const pairs = Array.from(
    { length: 16 },
    (_, index) => `'key${index}', 'line-${index}' || char(10) || 'value-' || i`,
  ).join(', ');
  writeToFile(
    dataDir,
    `with recursive n(i) as (select cast(? as integer) + 1 union all select i + 1 from n where i < ?)
     insert into logs (id, created_at_ms, workspace_id, trace_id, span_id, method, path, endpoint, status,
       is_attempt, stream, latency_ms, retry_count, metadata)
     select 'log_' || i, i, 'ws', 'trace-' || i, 'span-' || i, 'POST', '/v1/chat/completions',
       'chat.completions', 200, 0, 0, 1.5, 0, json_object(${pairs}) from n`,
    from,
    to,
  );
}

/**
 * Hourly rollup rows of workspace `ws` for `_user` values user-<from + 1> to user-<to>, each hour of the
 * first `hours` from 0, each row counting the user's number of requests: summing them all takes seconds
 * once there are hundreds of thousands.
 */
export function seedUserRollups(dataDir: string, from: number, to: number, hours: number): void {
  const sums = ROLLUP_SUM_COLUMNS.map((column) => (column === 'requests' ? 'u.i' : '0')).join(', ');
  writeToFile(
    dataDir,
    `with recursive u(i) as (select cast(? as integer) + 1 union all select i + 1 from u where i < ?),
       h(i) as (select 0 union all select i + 1 from h where i < ? - 1)
     insert into log_rollups (${ROLLUP_COLUMNS.map((c) => `"${c}"`).join(', ')})
     select 'ws', 'hour', h.i * 3600000, 'openai', 'gpt-4o', 'key', '', 2, '_user', 'user-' || u.i, ${sums}
     from u, h`,
    from,
    to,
    hours,
  );
}
