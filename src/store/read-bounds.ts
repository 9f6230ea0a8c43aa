/**
 * The bounds of the log's searches and analytics queries, whichever runs them (a SQLite reader thread,
 * SQLite's main connection, PostgreSQL), and the errors they answer with, the same everywhere.
 */
import type { AbortSignalLike } from '../core/abort.js';
import { GatewayError } from '../core/errors.js';

/** How long one read may wait and run, from when it is queued, before it is stopped. */
export const DEFAULT_READ_TIMEOUT_MS = 10_000;
/** The reads that may wait behind the running one of a reader, all workspaces together; one more is
 * refused. */
export const MAX_QUEUED_READS = 16;

/** A read unanswered at its bound, stopped: a 408. Told of analytics by the analytics repository. */
export function readTimedOut(timeoutMs: number, cause?: unknown): GatewayError {
  return new GatewayError(
    'request_timeout',
    `The logs query was unanswered after ${timeoutMs / 1000} s and was stopped: narrow it with from_ms and to_ms or more filters`,
    { cause },
  );
}

/** A read refused because MAX_QUEUED_READS already wait: a 429 to send again shortly. */
export function tooManyReads(): GatewayError {
  return new GatewayError(
    'rate_limited',
    'Too many logs queries are waiting: send the request again shortly',
    {
      headers: { 'retry-after': '1' },
    },
  );
}

/** What a read whose request ended rejects with: the signal's reason. */
export function readEnded(signal: AbortSignalLike): unknown {
  return signal.reason ?? new Error('The request ended before its logs query started');
}
