/**
 * The batched background writer of log records. `enqueue` never waits for the store: records are
 * buffered and flushed in batches on a timer or when a batch fills. On shutdown `close` flushes what is
 * left. If the store fails, the batch is kept and retried (bounded), so a blip loses nothing. If the
 * store refuses the batch's values, its records are written one by one and only the refused ones are
 * dropped (and counted): kept at the head of the buffer, one would block every later record for good.
 * Records that come while `close` writes (a call the stop ended, recorded once its connection was destroyed)
 * are written too: the pipeline counts the calls under way (`callBegan`, `callDone`), and `close` waits, in
 * its time, for those still running to end and be recorded. One that comes after it is dropped, and said so
 * in the log.
 */
import type { Logger } from 'pino';
import { performance } from 'node:perf_hooks';
import { isRefusedValue } from '../store/db-errors.js';
import type { LogRecord, Store } from '../store/types.js';
import { settlesBy } from '../core/settles-by.js';
import { setImmediate } from 'node:timers';

export interface LogWriter {
  enqueue(record: LogRecord): void;
  /** A call has begun: its records come when it ends (`callDone`), and `close` waits for them. */
  callBegan(): void;
  /** A call that began has ended, its records enqueued. */
  callDone(): void;
  /** Writes everything buffered now. */
  flush(): Promise<void>;
  /** Writes what is left, and what comes meanwhile, for `timeoutMs` at most (a stop's share of its grace
   * period); what the store has not taken by then, or comes later, is dropped, and said so in the log. */
  close(timeoutMs?: number): Promise<void>;
  readonly pending: number;
  /** Records the store refused (their values, not its availability) and that were dropped. */
  readonly refused: number;
}

export interface LogWriterOptions {
  batchSize: number;
  flushIntervalMs: number;
  /** Buffered records beyond this are dropped (and counted) rather than exhausting memory. */
  maxBuffered?: number;
}

export function createLogWriter(store: Store, logger: Logger, options: LogWriterOptions): LogWriter {
  const maxBuffered = options.maxBuffered ?? 100_000;
  let buffer: LogRecord[] = [];
  let flushing: Promise<void> | undefined;
  let dropped = 0;
  let refused = 0;
  /** Writes the store did not take (unavailable, not refusing the values), since start. */
  let failedWrites = 0;
  let closed = false;
  /** Calls under way (callBegan, callDone), whose records are still to come. */
  let calls = 0;
  /** Woken when a call ends, while `close` waits for one to. */
  let wake: (() => void) | undefined;

  const refuse = (record: LogRecord, err: unknown): 1 => {
    refused += 1;
    logger.error(
      { err, refused, id: record.id, trace_id: record.trace_id },
      'log record refused by the store: dropped',
    );
    return 1;
  };

  /** Writes the batch; how many of its records are done with (written or refused), from its start. */
  const writeBatch = async (batch: LogRecord[]): Promise<number> => {
    try {
      await store.insertLogs(batch);
      return batch.length;
    } catch (err) {
      if (!isRefusedValue(err)) {
        failedWrites += 1;
        logger.error({ err, records: batch.length }, 'log records could not be written; will retry');
        return 0;
      }
      if (batch.length === 1) return refuse(batch[0], err);
    }
    // A record of the batch cannot be stored: each on its own, so that only that one is lost.
    for (let i = 0; i < batch.length; i++) {
      try {
        await store.insertLogs([batch[i]]);
      } catch (err) {
        if (!isRefusedValue(err)) {
          failedWrites += 1;
          logger.error({ err, records: batch.length - i }, 'log records could not be written; will retry');
          return i;
        }
        refuse(batch[i], err);
      }
    }
    return batch.length;
  };

  // Writes what is buffered when it starts; records that arrive meanwhile wait for the next flush, so a
  // busy gateway writes one batch per interval rather than a stream of small ones.
  const writeBatches = async (): Promise<void> => {
    let due = buffer.length;
    while (due > 0) {
      const batch = buffer.slice(0, Math.min(options.batchSize, due));
      const done = await writeBatch(batch);
      buffer = buffer.slice(done);
      due -= done;
      if (done < batch.length) return;
    }
  };

  const flush = (): Promise<void> => {
    if (flushing) return flushing.then(() => (buffer.length > 0 ? flush() : undefined));
    flushing = writeBatches().finally(() => {
      flushing = undefined;
    });
    return flushing;
  };

  const timer = setInterval(() => {
    if (buffer.length > 0) void flush();
  }, options.flushIntervalMs);
  timer.unref();

  return {
    enqueue(record) {
      if (closed) {
        logger.error(
          { id: record.id, trace_id: record.trace_id },
          'log record came after the final writes: dropped',
        );
        return;
      }
      if (buffer.length >= maxBuffered) {
        dropped += 1;
        if (dropped % 1000 === 1) logger.error({ dropped }, 'log buffer full: dropping records');
        return;
      }
      buffer.push(record);
      if (buffer.length >= options.batchSize && !flushing) void flush();
    },
    callBegan() {
      calls += 1;
    },
    callDone() {
      calls -= 1;
      const waiting = wake;
      wake = undefined;
      // A turn later: a call whose context was built (counted until then) goes on to its execution, counted
      // anew, in the microtasks that follow.
      if (waiting) setImmediate(waiting);
    },
    flush,
    async close(timeoutMs = Infinity) {
      clearInterval(timer);
      const deadline = performance.now() + timeoutMs;
      // A few tries: a store that is briefly unavailable at shutdown should not lose the tail. Bounded in
      // time too: a store that does not answer must not hold the stop past what the orchestrator allows.
      // Records still come while it writes (a call ended by the stop), and are written in the next round.
      // With nothing buffered, it waits for the calls still running (a call the stop cut at its end is
      // recorded a few turns of the loop after its connection was destroyed), and writes their records;
      // with none running, nothing more can come, and it ends.
      const failedBefore = failedWrites;
      const timeLeft = () => failedWrites - failedBefore < 3 && performance.now() < deadline;
      while (timeLeft()) {
        if (buffer.length === 0) {
          if (calls === 0) break;
          const ended = new Promise<void>((resolve) => (wake = resolve));
          if (!(await settlesBy(ended, deadline))) break;
          continue;
        }
        if (!(await settlesBy(flush(), deadline))) break;
      }
      closed = true;
      wake = undefined;
      if (buffer.length > 0) {
        logger.error({ records: buffer.length }, 'log records not written before the stop ran out of time');
      }
      if (calls > 0) {
        logger.error(
          { calls },
          'calls still running at the end of the final writes: their log records are not written',
        );
      }
    },
    get pending() {
      return buffer.length;
    },
    get refused() {
      return refused;
    },
  };
}
