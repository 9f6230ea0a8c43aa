/**
 * The log's searches and analytics queries on SQLite's main connection, where the file is not in WAL mode
 * and so no reader thread is started (index.ts): a reader's shared lock held through a search would hold
 * every write back, the log thread's and the main connection's, and while the log thread waits to commit no
 * other read may start either, so every query of the gateway would wait on the search.
 *
 * Here a read runs on the event loop, which answers nothing else meanwhile, so its bound matters more, not
 * less. It is the reader threads' bound: timed from when the read is queued, MAX_QUEUED_READS waiting per
 * reader, a read whose request ended dropped while it waits. A running read cannot be interrupted from
 * outside (the event loop is busy in it), so the main connection's STOP_POINT checks the clock itself and
 * throws once the read's bound has passed (connect.ts): the statement stops at the next row it looks at,
 * and the read is a 408 as on a reader thread.
 */
import { performance } from 'node:perf_hooks';
import { CompiledQuery, type Kysely } from 'kysely';
import type { AbortSignalLike } from '../core/abort.js';
import { ReadStopped, type ReadStop } from './connect.js';
import {
  DEFAULT_READ_TIMEOUT_MS,
  MAX_QUEUED_READS,
  readEnded,
  readTimedOut,
  tooManyReads,
} from './read-bounds.js';
import type { Database } from './schema.js';
import type { SqliteLogReader, SqliteLogReaderOptions, SqliteLogReaders } from './sqlite-log-reader.js';

/** A reader for log searches and one for analytics queries on the main connection, each its own queue. */
export function startSqliteConnectionReaders(
  db: Kysely<Database>,
  stop: ReadStop,
  options: SqliteLogReaderOptions = {},
): SqliteLogReaders {
  return {
    logs: startSqliteConnectionReader(db, stop, options),
    analytics: startSqliteConnectionReader(db, stop, options),
  };
}

export function startSqliteConnectionReader(
  db: Kysely<Database>,
  stop: ReadStop,
  { timeoutMs = DEFAULT_READ_TIMEOUT_MS, maxQueued = MAX_QUEUED_READS }: SqliteLogReaderOptions = {},
): SqliteLogReader {
  /** The reader's reads not yet answered, waiting or running. */
  let held = 0;
  /** Settles when the read before the next one is over. */
  let last: Promise<unknown> = Promise.resolve();
  let closed = false;

  const run = async (
    sql: string,
    parameters: readonly unknown[],
    deadline: number,
    settled: () => boolean,
    running: (on: boolean) => void,
  ): Promise<unknown[]> =>
    // The connection held from the clock's setting to its reset: no other query runs on it meanwhile.
    db.connection().execute(async (connection) => {
      if (settled()) return [];
      stop.at = deadline;
      running(true);
      try {
        return (await connection.executeQuery(CompiledQuery.raw(sql, [...parameters]))).rows as unknown[];
      } finally {
        running(false);
        stop.at = Infinity;
      }
    });

  return {
    all<Row>(
      sql: string,
      parameters: readonly unknown[],
      { signal }: { signal?: AbortSignalLike } = {},
    ): Promise<Row[]> {
      if (closed) return Promise.reject(new Error('The log reader is closed'));
      if (signal?.aborted) return Promise.reject(readEnded(signal));
      if (held > maxQueued) return Promise.reject(tooManyReads());
      held += 1;
      const deadline = performance.now() + timeoutMs;
      return new Promise<Row[]>((resolve, reject) => {
        let done = false;
        let isRunning = false;
        const settle = (outcome: () => void) => {
          if (done) return;
          done = true;
          held -= 1;
          clearTimeout(timer);
          signal?.removeEventListener('abort', ended);
          outcome();
        };
        // While it waits: taken from the queue at once. While it runs (it may wait for the write lock
        // between tries, connect.ts): stopped at its next stop point.
        const ended = () => {
          if (isRunning) stop.at = -Infinity;
          settle(() => reject(readEnded(signal!)));
        };
        const timer = setTimeout(() => settle(() => reject(readTimedOut(timeoutMs))), timeoutMs).unref();
        signal?.addEventListener('abort', ended, { once: true });
        const read = last.then(() =>
          run(
            sql,
            parameters,
            deadline,
            () => done,
            (on) => (isRunning = on),
          ),
        );
        last = read.then(
          () => undefined,
          () => undefined,
        );
        read.then(
          (rows) => settle(() => resolve(rows as Row[])),
          (error: unknown) =>
            settle(() => reject(error instanceof ReadStopped ? readTimedOut(timeoutMs) : error)),
        );
      });
    },
    async close() {
      closed = true;
      await last;
    },
  };
}
