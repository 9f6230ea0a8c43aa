/**
 * The queue every reader of the log's searches and analytics queries keeps on SQLite, whatever runs its
 * reads (a reader thread, sqlite-log-reader.ts, or the main connection, sqlite-connection-reader.ts): one
 * read at a time, each bound timed from when it is queued (a read behind others waits no longer than its
 * bound), at most MAX_QUEUED_READS waiting, a read whose request ended (its signal) taken from the queue
 * at once and never run, and a running read stopped at its bound or when its request ends. The next read
 * starts once the one before no longer holds what it ran on (a thread ending, the connection).
 */
import { performance } from 'node:perf_hooks';
import type { AbortSignalLike } from '../core/abort.js';
import {
  DEFAULT_READ_TIMEOUT_MS,
  MAX_QUEUED_READS,
  readEnded,
  readTimedOut,
  tooManyReads,
} from './read-bounds.js';

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
  /** Rejects the reads waiting and the one running, stops that one, and frees what the reader holds. */
  close(): Promise<void>;
}

/** The readers of the log's two kinds of reads, each with its own queue and bound. */
export interface SqliteLogReaders {
  /** Log searches and filtered listings (repositories/logs.ts). */
  logs: SqliteLogReader;
  /** Analytics queries (repositories/analytics.ts). */
  analytics: SqliteLogReader;
}

/** One read as the lane hands it to what runs it. */
export interface LaneRead {
  sql: string;
  parameters: readonly unknown[];
  /** performance.now() at the read's bound. */
  deadline: number;
}

/** What runs a lane's reads, one at a time. */
export interface ReadRunner {
  /**
   * Runs one read. Settles once the read no longer holds what it ran on: after stop() too, which may
   * be later than the read's own answer (the lane has answered it already).
   */
  run(read: LaneRead): Promise<unknown[]>;
  /** Stops the read now running, at its next stop point. */
  stop(): void;
  /** Frees what the runner holds; no read runs. */
  close(): Promise<void>;
}

/** A lane for log searches and one for analytics queries, each with a runner of its own. */
export function startReadLanes(
  runner: () => ReadRunner,
  options: SqliteLogReaderOptions = {},
): SqliteLogReaders {
  return { logs: startReadLane(runner(), options), analytics: startReadLane(runner(), options) };
}

interface Read extends LaneRead {
  resolve: (rows: unknown[]) => void;
  reject: (error: unknown) => void;
  /** Answered, refused or dropped: nothing more is done with it. */
  done: boolean;
  /** The bound, from when the read was queued. */
  timer: NodeJS.Timeout;
  /** Removes the abort listener of the request's signal. */
  release: () => void;
}

export function startReadLane(
  runner: ReadRunner,
  { timeoutMs = DEFAULT_READ_TIMEOUT_MS, maxQueued = MAX_QUEUED_READS }: SqliteLogReaderOptions = {},
): SqliteLogReader {
  const queue: Read[] = [];
  /** The read handed to the runner, until the runner's run settles. */
  let running: Read | undefined;
  /** Settles when the runner's run of `running` does. */
  let idle: Promise<void> = Promise.resolve();
  let closed = false;

  const settle = (read: Read, outcome: (read: Read) => void) => {
    if (read.done) return;
    read.done = true;
    clearTimeout(read.timer);
    read.release();
    outcome(read);
  };

  /** Takes the read from the queue, or stops it where it runs, and rejects it with `error`. */
  const abandon = (read: Read, error: unknown) => {
    if (read.done) return;
    const index = queue.indexOf(read);
    if (index >= 0) queue.splice(index, 1);
    else if (running === read) runner.stop();
    settle(read, () => read.reject(error));
  };

  const next = () => {
    if (running || closed) return;
    const read = queue.shift();
    if (!read) return;
    running = read;
    idle = (async () => runner.run(read))()
      .then(
        (rows) => settle(read, () => read.resolve(rows)),
        (error: unknown) => settle(read, () => read.reject(error)),
      )
      .finally(() => {
        running = undefined;
        next();
      });
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
        // Nobody waits for the read of a request that ended: it is dropped, or stopped where it runs.
        const ended = () => {
          if (signal) abandon(read, readEnded(signal));
        };
        const read: Read = {
          sql,
          parameters,
          deadline: performance.now() + timeoutMs,
          resolve: resolve as (rows: unknown[]) => void,
          reject,
          done: false,
          timer: setTimeout(() => abandon(read, readTimedOut(timeoutMs)), timeoutMs).unref(),
          release: () => signal?.removeEventListener('abort', ended),
        };
        signal?.addEventListener('abort', ended, { once: true });
        queue.push(read);
        next();
      });
    },
    async close() {
      closed = true;
      const error = new Error('The log reader is closed');
      for (const read of queue.splice(0)) settle(read, () => read.reject(error));
      if (running) abandon(running, error);
      await idle;
      await runner.close();
    },
  };
}
