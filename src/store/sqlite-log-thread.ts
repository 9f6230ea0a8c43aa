/**
 * Appended rows — log records and semantic cache entries — are inserted into the SQLite file on a worker
 * thread with a connection of their own. better-sqlite3 is synchronous: a batch of a few hundred log rows,
 * or one cache entry with its 6 KB vector and three indexes to update, written on the main thread would
 * stall every request in flight. WAL mode lets the two connections share the file; the main connection
 * retries the moments the worker holds the write lock (connect.ts). The thread runs at background
 * priority while it keeps up (see thread-priority.ts).
 *
 * The WAL's checkpoints run here too: copying a few megabytes of WAL back into the database and syncing
 * it takes tens of milliseconds, and SQLite runs it on whichever connection's commit crosses the limit.
 * The main connection never checkpoints (connect.ts); this one does after its commits and every second,
 * so writes made on the main thread alone are checkpointed as well.
 */
import { performance } from 'node:perf_hooks';
import { createRequire } from 'node:module';
import {
  DEFAULT_GOVERNOR,
  PriorityGovernor,
  setThreadPriority,
  type ThreadPriority,
} from './thread-priority.js';
import { startWorker } from './worker-heap.js';

/** A row's values, in the order of the `columns` sent with them. */
type RowValues = Array<string | number | null>;

// Plain JavaScript, evaluated as the worker's script, so it runs the same from `dist/` and from sources.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
// The thread's Linux task id, so the main thread can set its scheduling policy.
try {
  parentPort.postMessage({ tid: Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop()) });
} catch {}
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
db.pragma('synchronous = NORMAL');
// A cache entry names its workspace: one of a workspace deleted meanwhile is refused, as on the main
// connection (log rows reference nothing).
db.pragma('foreign_keys = ON');
// The WAL is copied back into the file here, off the event loop: the main connection never does it
// (connect.ts). This connection's commits still checkpoint past SQLite's 1000 pages; the timer covers
// the main connection's writes while no log is written. PASSIVE: it never waits for a writer.
setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {}
}, workerData.checkpointMs).unref();
const statements = new Map();
function statementFor(table, columns) {
  const key = table + ':' + columns.join(',');
  let statement = statements.get(key);
  if (!statement) {
    const names = columns.map((c) => '"' + c + '"').join(', ');
    const values = columns.map(() => '?').join(', ');
    statement = db.prepare('INSERT INTO "' + table + '" (' + names + ') VALUES (' + values + ')');
    statements.set(key, statement);
  }
  return statement;
}
const upserts = new Map();
const insertAll = db.transaction((table, columns, rows, rollups) => {
  const statement = statementFor(table, columns);
  for (const row of rows) statement.run(row);
  if (rollups && rollups.rows.length > 0) {
    let upsert = upserts.get(rollups.sql);
    if (!upsert) {
      upsert = db.prepare(rollups.sql);
      upserts.set(rollups.sql, upsert);
    }
    for (const row of rollups.rows) upsert.run(row);
  }
});
parentPort.on('message', (message) => {
  if (message.close) {
    db.close();
    parentPort.postMessage({ id: message.id });
    return;
  }
  try {
    if (message.rows.length > 0) insertAll(message.table, message.columns, message.rows, message.rollups);
    parentPort.postMessage({ id: message.id });
  } catch (error) {
    parentPort.postMessage({ id: message.id, error: String(error && error.message || error), code: error && error.code });
  }
});
`;

/** How often the thread copies the WAL back into the database file. */
const CHECKPOINT_MS = 1_000;

/** Rows added to the log's rollups in the same transaction: an upsert statement and its rows' values. */
export interface RollupUpserts {
  sql: string;
  rows: unknown[][];
}

/** The tables whose rows are only ever appended by this thread. */
export type AppendedTable = 'logs' | 'semantic_cache_entries';

export interface SqliteLogThread {
  /** Inserts the rows in one transaction, with the rollups' upserts; resolves once committed. */
  insert(
    table: AppendedTable,
    columns: readonly string[],
    rows: RowValues[],
    rollups?: RollupUpserts,
  ): Promise<void>;
  /** Another connection waits for the write lock, which this thread may hold: run at normal priority. */
  boost(): void;
  /** Someone waits for every row from now on (a stop): run at normal priority until closed. */
  hold(): void;
  close(): Promise<void>;
  /** Stops the thread at once, what it is writing left unwritten (a close that did not end in time). */
  terminate(): void;
}

export function startSqliteLogThread(file: string): SqliteLogThread {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = startWorker(WORKER_SOURCE, {
    eval: true,
    workerData: { file, driver, checkpointMs: CHECKPOINT_MS },
    // A batch of rows at a time: a small young generation (see worker-heap.ts for why it needs saying).
    resourceLimits: { maxYoungGenerationSizeMb: 4 },
  });
  worker.unref();
  let nextId = 0;
  const pending = new Map<number, { resolve: () => void; reject: (error: Error) => void; sentAt: number }>();
  const governor = new PriorityGovernor();
  let tid: number | undefined;
  const prioritise = (priority: ThreadPriority) => {
    if (tid !== undefined) void setThreadPriority(tid, priority);
  };
  // A batch unanswered past the governor's limit counts as late already: at idle priority on a saturated
  // machine the thread gets no core, and so sends no late answer that would move it.
  let watchdog: NodeJS.Timeout | undefined;
  const watch = () => {
    if (watchdog !== undefined || governor.priority !== 'background' || pending.size === 0) return;
    watchdog = setTimeout(() => {
      watchdog = undefined;
      const oldest = pending.values().next().value;
      if (oldest === undefined) return;
      const now = performance.now();
      const change = governor.observe(now - oldest.sentAt, now);
      if (change) prioritise(change);
      watch();
    }, DEFAULT_GOVERNOR.slowAckMs + 1);
    watchdog.unref();
  };
  worker.on('message', (message: { id: number; error?: string; code?: string } | { tid: number }) => {
    if ('tid' in message) {
      tid = message.tid;
      prioritise(governor.priority);
      return;
    }
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (waiter) {
      const now = performance.now();
      const change = governor.observe(now - waiter.sentAt, now);
      if (change) prioritise(change);
    }
    // The driver's code goes with the error (SQLITE_CONSTRAINT…): the log writer tells a refused record
    // from a busy or failing database by it.
    if (message.error) waiter?.reject(Object.assign(new Error(message.error), { code: message.code }));
    else waiter?.resolve();
  });
  worker.on('error', (error) => {
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
  });
  const send = (message: object): Promise<void> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject, sentAt: performance.now() });
      worker.postMessage({ ...message, id });
      watch();
    });
  let closed: Promise<void> | undefined;
  return {
    insert: (table, columns, rows, rollups) => send({ table, columns, rows, rollups }),
    boost() {
      const change = governor.boost(performance.now());
      if (change) prioritise(change);
    },
    hold() {
      const change = governor.hold(performance.now());
      if (change) prioritise(change);
    },
    close() {
      closed ??= send({ close: true }).then(async () => {
        await worker.terminate();
      });
      return closed;
    },
    terminate() {
      void worker.terminate();
    },
  };
}
