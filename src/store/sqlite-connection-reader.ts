/**
 * The log's searches and analytics queries on SQLite's main connection, where the file is not in WAL mode
 * and so no reader thread is started (index.ts): a reader's shared lock held through a search would hold
 * every write back, the log thread's and the main connection's, and while the log thread waits to commit no
 * other read may start either, so every query of the gateway would wait on the search.
 *
 * Here a read runs on the event loop, which answers nothing else meanwhile, so its bound matters more, not
 * less. It is the reader threads' queue and bound (read-lane.ts), a lane for log searches and one for
 * analytics queries; both run on the one connection, so a read of one kind may wait behind a read of the
 * other. A read dropped while it waits never takes the connection. A running read cannot be interrupted
 * from outside (the event loop is busy in it), so the main connection's STOP_POINT checks the clock itself
 * and throws once the read's bound has passed (connect.ts): the statement stops at the next row it looks
 * at, and the read is a 408 as on a reader thread. A read stopped while it waits for the write lock
 * between tries (connect.ts) stops at its first row.
 */
import { CompiledQuery, type Kysely } from 'kysely';
import { ReadStopped, type ReadStop } from './connect.js';
import { DEFAULT_READ_TIMEOUT_MS, readTimedOut } from './read-bounds.js';
import {
  startReadLane,
  startReadLanes,
  type ReadRunner,
  type SqliteLogReader,
  type SqliteLogReaderOptions,
  type SqliteLogReaders,
} from './read-lane.js';
import type { Database } from './schema.js';

/** A reader for log searches and one for analytics queries on the main connection, each its own queue. */
export function startSqliteConnectionReaders(
  db: Kysely<Database>,
  stop: ReadStop,
  options: SqliteLogReaderOptions = {},
): SqliteLogReaders {
  return startReadLanes(() => connectionRunner(db, stop, options.timeoutMs), options);
}

export function startSqliteConnectionReader(
  db: Kysely<Database>,
  stop: ReadStop,
  options: SqliteLogReaderOptions = {},
): SqliteLogReader {
  return startReadLane(connectionRunner(db, stop, options.timeoutMs), options);
}

function connectionRunner(
  db: Kysely<Database>,
  stop: ReadStop,
  timeoutMs = DEFAULT_READ_TIMEOUT_MS,
): ReadRunner {
  /** The read now run was stopped: it runs no statement, or stops at its next stop point. */
  let stopped = false;
  /** The read's statement has the connection, its clock set. */
  let running = false;
  return {
    run: ({ sql, parameters, deadline }) => {
      stopped = false;
      // The connection held from the clock's setting to its reset: no other query runs on it meanwhile.
      return db.connection().execute(async (connection) => {
        if (stopped) return [];
        stop.at = deadline;
        running = true;
        try {
          return (await connection.executeQuery(CompiledQuery.raw(sql, [...parameters]))).rows as unknown[];
        } catch (error) {
          throw error instanceof ReadStopped ? readTimedOut(timeoutMs) : error;
        } finally {
          running = false;
          stop.at = Infinity;
        }
      });
    },
    stop() {
      stopped = true;
      if (running) stop.at = -Infinity;
    },
    close: async () => undefined,
  };
}
