/**
 * The log's list and search reads on SQLite run on a worker thread with a read-only connection of their
 * own. better-sqlite3 is synchronous, and a search scans every record of the workspace (the text may be in
 * any metadata key or value of any of them): 100,000 records took seconds, during which the main thread
 * answered nothing. WAL mode lets this connection read while the log thread (sqlite-log-thread.ts) writes.
 *
 * Log searches and analytics queries each have a reader of their own (startSqliteLogReaders): a thread, a
 * queue and a bound each, so a search running to its bound never holds the console's charts back, nor a
 * long sum a search. A reader runs its reads one at a time, each bound timed from when it was queued (a
 * read behind others waits no longer than its bound); at most MAX_QUEUED_READS wait, and a read whose
 * request ended (its signal) is dropped from the queue. SQLite has no statement timeout, and better-sqlite3 cannot interrupt a statement: a read
 * still running at its bound, or whose request ended, is stopped by ending the thread, and the next read
 * starts a new one once that thread is gone, so there is never more than one. A thread busy in SQLite's C
 * code ends only when it next runs JavaScript, which a search in ASCII never does: each query sent here
 * calls STOP_POINT for each row it looks at, a call back that lets the ending thread stop there.
 */
import { createRequire } from 'node:module';
import type { Worker } from 'node:worker_threads';
import type { AbortSignalLike } from '../core/abort.js';
import { STOP_POINT, UNICODE_LOWER } from './connect.js';
import {
  DEFAULT_READ_TIMEOUT_MS,
  MAX_QUEUED_READS,
  readEnded,
  readTimedOut,
  tooManyReads,
} from './read-bounds.js';
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

export interface SqliteLogReaderOptions {
  timeoutMs?: number;
  maxQueued?: number;
}

export interface SqliteLogReader {
  /**
   * The rows of one SELECT, which calls STOP_POINT for each row it looks at; rejects with a 408
   * `request_timeout` when it is unanswered at the bound, a 429 `rate_limited` when `maxQueued` already
   * wait, and with the signal's reason when the signal aborts, the read waiting or running.
   */
  all<Row>(
    sql: string,
    parameters: readonly unknown[],
    options?: { signal?: AbortSignalLike },
  ): Promise<Row[]>;
  close(): Promise<void>;
}

interface Read {
  /** Sent with the read's message and echoed in its answer. */
  id: number;
  sql: string;
  parameters: readonly unknown[];
  resolve: (rows: unknown[]) => void;
  reject: (error: unknown) => void;
  /** The bound, from when the read was queued. */
  timer: NodeJS.Timeout;
  /** Removes the abort listener of the request's signal. */
  release: () => void;
}

/** The readers of the log's two kinds of reads, each with its own thread, queue and bound. */
export interface SqliteLogReaders {
  /** Log searches and filtered listings (repositories/logs.ts). */
  logs: SqliteLogReader;
  /** Analytics queries (repositories/analytics.ts). */
  analytics: SqliteLogReader;
}

export function startSqliteLogReaders(file: string, options: SqliteLogReaderOptions = {}): SqliteLogReaders {
  return { logs: startSqliteLogReader(file, options), analytics: startSqliteLogReader(file, options) };
}

export function startSqliteLogReader(
  file: string,
  { timeoutMs = DEFAULT_READ_TIMEOUT_MS, maxQueued = MAX_QUEUED_READS }: SqliteLogReaderOptions = {},
): SqliteLogReader {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const queue: Read[] = [];
  /** The thread reads are sent to. */
  let worker: Worker | undefined;
  /** A thread ended while it ran a read, until it has exited: no other starts meanwhile. */
  let ending: Worker | undefined;
  let running: { read: Read; worker: Worker } | undefined;
  let closed = false;
  let lastId = 0;

  const finish = (read: Read): Read => {
    clearTimeout(read.timer);
    read.release();
    return read;
  };

  const settle = (): Read | undefined => {
    if (!running) return undefined;
    const { read } = running;
    running = undefined;
    return finish(read);
  };

  const unqueue = (read: Read): boolean => {
    const index = queue.indexOf(read);
    if (index < 0) return false;
    queue.splice(index, 1);
    finish(read);
    return true;
  };

  /** Takes the read from the queue, or stops it where it runs, and rejects it with `error`. */
  const abandon = (read: Read, error: unknown) => {
    if (unqueue(read)) {
      read.reject(error);
      return;
    }
    if (running?.read !== read) return;
    // The thread is busy in SQLite's C code: only ending it stops the statement. The next read waits for
    // its exit (the 'exit' listener), at its next stop point.
    const target = running.worker;
    if (worker === target) worker = undefined;
    ending = target;
    void target.terminate();
    settle()?.reject(error);
  };

  const timedOut = (read: Read) => abandon(read, readTimedOut(timeoutMs));

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
      // An answer of a thread already ended (its read stopped at the bound, the next one started on a
      // new thread) may still arrive: it belongs to no read now running and is dropped.
      if (running?.worker !== started || running.read.id !== message.id) return;
      const read = settle();
      if (message.error !== undefined) {
        read?.reject(Object.assign(new Error(message.error), { code: message.code }));
      } else {
        read?.resolve(message.rows ?? []);
      }
      next();
    });
    const lost = (error: Error) => {
      if (worker !== started) return;
      worker = undefined;
      settle()?.reject(error);
      next();
    };
    started.on('error', lost);
    started.on('exit', (code) => {
      if (ending === started) {
        ending = undefined;
        next();
        return;
      }
      lost(new Error(`The log reader thread exited (code ${code})`));
    });
    worker = started;
    return started;
  };

  const next = () => {
    if (running || ending || closed) return;
    const read = queue.shift();
    if (!read) return;
    const target = workerFor();
    running = { read, worker: target };
    target.postMessage({ id: read.id, sql: read.sql, parameters: read.parameters });
  };

  return {
    all<Row>(
      sql: string,
      parameters: readonly unknown[],
      { signal }: { signal?: AbortSignalLike } = {},
    ): Promise<Row[]> {
      if (closed) return Promise.reject(new Error('The log reader is closed'));
      if (signal?.aborted) return Promise.reject(readEnded(signal));
      if (queue.length >= maxQueued) return Promise.reject(tooManyReads());
      return new Promise<Row[]>((resolve, reject) => {
        const read: Read = {
          id: ++lastId,
          sql,
          parameters,
          resolve: resolve as (rows: unknown[]) => void,
          reject,
          timer: setTimeout(() => timedOut(read), timeoutMs).unref(),
          release: () => signal?.removeEventListener('abort', ended),
        };
        // Nobody waits for the read of a request that ended: it is dropped, or stopped where it runs.
        const ended = () => {
          if (signal) abandon(read, readEnded(signal));
        };
        signal?.addEventListener('abort', ended, { once: true });
        queue.push(read);
        next();
      });
    },
    async close() {
      closed = true;
      const error = new Error('The log reader is closed');
      settle()?.reject(error);
      for (const read of queue.splice(0)) finish(read).reject(error);
      const threads = [worker, ending];
      worker = undefined;
      ending = undefined;
      await Promise.all(threads.map((thread) => thread?.terminate()));
    },
  };
}
