/**
 * The log's list and search reads on SQLite run on a worker thread with a read-only connection of their
 * own. better-sqlite3 is synchronous, and a search scans every record of the workspace (the text may be in
 * any metadata key or value of any of them): 100,000 records took seconds, during which the main thread
 * answered nothing. WAL mode lets this connection read while the log thread (sqlite-log-thread.ts) writes.
 *
 * Log searches and analytics queries each have a reader of their own (startSqliteLogReaders): a thread, a
 * queue and a bound each (read-lane.ts), so a search running to its bound never holds the console's charts
 * back, nor a long sum a search. A reader's thread starts with its first read. SQLite has no statement
 * timeout, and better-sqlite3 cannot interrupt a statement: a read still running at its bound, or whose
 * request ended, is stopped by ending the thread, and the reader's next read starts a new one once that
 * thread is gone, so a reader never has more than one. A thread busy in SQLite's C code ends only when it
 * next runs JavaScript, which a search in ASCII never does: each query sent here calls STOP_POINT for each
 * row it looks at, a call back that lets the ending thread stop there.
 */
import { createRequire } from 'node:module';
import type { Worker } from 'node:worker_threads';
import { STOP_POINT, UNICODE_LOWER } from './connect.js';
import { DEFAULT_READ_TIMEOUT_MS, MAX_QUEUED_READS } from './read-bounds.js';
import {
  startReadLane,
  startReadLanes,
  type ReadRunner,
  type SqliteLogReader,
  type SqliteLogReaderOptions,
  type SqliteLogReaders,
} from './read-lane.js';
import { startWorker } from './worker-heap.js';

// Plain JavaScript, evaluated as the worker's script, so it runs the same from `dist/` and from sources.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
// Read-only: a statement that would write is refused. The main connection opened the file in WAL mode
// first, so the WAL index (the -shm file) this connection shares exists.
const db = new Database(workerData.file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');
// The same folding as the main connection's (connect.ts).
db.function(workerData.unicodeLower, { deterministic: true }, (value) =>
  value === null || value === undefined ? null : String(value).toLowerCase(),
);
// Called for each row a query looks at: once the thread is being ended, the call throws and the
// statement stops there.
db.function(workerData.stopPoint, { deterministic: false }, () => 1);
const statements = new Map();
parentPort.on('message', (message) => {
  try {
    let statement = statements.get(message.sql);
    if (!statement) {
      if (statements.size >= 100) statements.clear();
      statement = db.prepare(message.sql);
      statements.set(message.sql, statement);
    }
    parentPort.postMessage({ id: message.id, rows: statement.all(message.parameters) });
  } catch (error) {
    parentPort.postMessage({
      id: message.id,
      error: String((error && error.message) || error),
      code: error && error.code,
    });
  }
});
`;

/**
 * Every query sent to the reader calls STOP_POINT for each row it looks at: without it a stopped statement
 * runs on to its end on a thread nothing waits for.
 */
export { STOP_POINT };

export { DEFAULT_READ_TIMEOUT_MS, MAX_QUEUED_READS };

export type { SqliteLogReader, SqliteLogReaderOptions, SqliteLogReaders };

export function startSqliteLogReaders(file: string, options: SqliteLogReaderOptions = {}): SqliteLogReaders {
  return startReadLanes(() => threadRunner(file), options);
}

export function startSqliteLogReader(file: string, options: SqliteLogReaderOptions = {}): SqliteLogReader {
  return startReadLane(threadRunner(file), options);
}

/** Runs reads on a thread of its own, started at the first read and again after one is stopped. */
function threadRunner(file: string): ReadRunner {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  /** The thread reads are sent to; none while a stopped read's thread ends. */
  let worker: Worker | undefined;
  /** The read sent, until its answer or its thread's end. */
  let current:
    | { id: number; worker: Worker; resolve: (rows: unknown[]) => void; reject: (error: unknown) => void }
    | undefined;
  let lastId = 0;

  const workerFor = (): Worker => {
    if (worker) return worker;
    const started = startWorker(WORKER_SOURCE, {
      eval: true,
      workerData: { file, driver, unicodeLower: UNICODE_LOWER, stopPoint: STOP_POINT },
      // A page of records at a time: a small young generation (see worker-heap.ts).
      resourceLimits: { maxYoungGenerationSizeMb: 4 },
    });
    started.unref();
    started.on('message', (message: { id: number; rows?: unknown[]; error?: string; code?: string }) => {
      // The answer of a read stopped (its thread being ended) is dropped: the read settles at the
      // thread's exit, so the next starts no thread before this one is gone.
      if (worker !== started || current?.worker !== started || current.id !== message.id) return;
      const { resolve, reject } = current;
      current = undefined;
      if (message.error !== undefined) {
        reject(Object.assign(new Error(message.error), { code: message.code }));
      } else {
        resolve(message.rows ?? []);
      }
    });
    const lost = (error: Error) => {
      if (worker === started) worker = undefined;
      if (current?.worker !== started) return;
      const { reject } = current;
      current = undefined;
      reject(error);
    };
    started.on('error', lost);
    started.on('exit', (code) => lost(new Error(`The log reader thread exited (code ${code})`)));
    worker = started;
    return started;
  };

  return {
    run: ({ sql, parameters }) =>
      new Promise<unknown[]>((resolve, reject) => {
        const target = workerFor();
        const id = ++lastId;
        current = { id, worker: target, resolve, reject };
        target.postMessage({ id, sql, parameters });
      }),
    stop() {
      if (!current) return;
      // The thread is busy in SQLite's C code: only ending it stops the statement, at its next stop
      // point. The read's run settles at the thread's exit ('exit' above).
      if (worker === current.worker) worker = undefined;
      void current.worker.terminate();
    },
    async close() {
      const thread = worker;
      worker = undefined;
      await thread?.terminate();
    },
  };
}
