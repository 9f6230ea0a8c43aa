/**
 * The batched background writer of log records. `enqueue` never waits for the store: records are
 * buffered and flushed in batches on a timer or when a batch fills. On shutdown `close` flushes what is
 * left. If the store fails, the batch is kept and retried (bounded), so a blip loses nothing. If the
 * store refuses the batch's values, its records are written one by one and only the refused ones are
 * dropped (and counted): kept at the head of the buffer, one would block every later record for good.
 * Records that come while `close` writes (a call the stop ended, recorded once its connection was destroyed)
 * are written too; one that comes after it is dropped, and said so in the log.
 */
import type { Logger } from 'pino';
import { performance } from 'node:perf_hooks';
import { isRefusedValue } from '../store/db-errors.js';
import type { LogRecord, Store } from '../store/types.js';
import { settlesBy } from '../core/settles-by.js';
import { setTimeout } from 'node:timers';

/** How long the final writes wait, with nothing buffered, for records still coming before they end. */
const SETTLE_MS = 10;

export interface LogWriter {
  enqueue(record: LogRecord): void;
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
    flush,
    async close(timeoutMs = Infinity) {
      clearInterval(timer);
      const deadline = performance.now() + timeoutMs;
      // A few tries: a store that is briefly unavailable at shutdown should not lose the tail. Bounded in
      // time too: a store that does not answer must not hold the stop past what the orchestrator allows.
      // Records still come while it writes (a call ended by the stop), and are written in the next round.
      // With nothing buffered, it waits SETTLE_MS for what is still coming (a call the stop cut at its end,
      // whose record is made a few turns of the loop after its connection was destroyed), and writes again
      // while records come.
      const failedBefore = failedWrites;
      const timeLeft = () => failedWrites - failedBefore < 3 && performance.now() < deadline;
      while (timeLeft()) {
        if (buffer.length === 0) {
          const wait = Math.min(SETTLE_MS, Math.max(0, deadline - performance.now()));
          await new Promise((resolve) => setTimeout(resolve, wait));
          if (buffer.length === 0) break;
        }
        if (!(await settlesBy(flush(), deadline))) break;
      }
      closed = true;
      if (buffer.length > 0) {
        logger.error({ records: buffer.length }, 'log records not written before the stop ran out of time');
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
