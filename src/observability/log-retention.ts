/**
 * Log retention: records older than `GATEWAY_LOG_RETENTION_DAYS` are deleted in the background, in bounded
 * batches (the oldest first, a pause between batches), so a sweep never holds the store for long and never
 * competes with the calls being logged. Every node sweeps; on PostgreSQL concurrent sweeps take different
 * rows (SKIP LOCKED), elsewhere a row deleted twice is simply not found the second time.
 */
import type { Logger } from 'pino';
import type { LogRepository } from '../store/types.js';

export interface LogRetentionOptions {
  /** Records older than this are deleted. */
  maxAgeMs: number;
  /** Time between sweeps. */
  intervalMs: number;
  /** Records per delete statement. */
  batchSize: number;
  /** A sweep stops after this many batches; the next sweep goes on where it stopped. */
  maxBatchesPerSweep: number;
  /** Pause between two batches of a sweep. */
  pauseMs: number;
  now?: () => number;
}

export const DEFAULT_RETENTION = {
  intervalMs: 60_000,
  batchSize: 5_000,
  maxBatchesPerSweep: 200,
  pauseMs: 50,
} as const;

export interface LogRetention {
  /** One sweep now; resolves with the number of records deleted. */
  sweep(): Promise<number>;
  /** Stops the timer and waits for a sweep under way. */
  close(): Promise<void>;
}

export function startLogRetention(
  store: Pick<LogRepository, 'deleteLogsBefore'>,
  logger: Logger,
  options: LogRetentionOptions,
): LogRetention {
  const now = options.now ?? Date.now;
  let running: Promise<number> | undefined;
  let closed = false;

  const sweepOnce = async (): Promise<number> => {
    const cutoff = now() - options.maxAgeMs;
    let deleted = 0;
    for (let batch = 0; batch < options.maxBatchesPerSweep && !closed; batch++) {
      const count = await store.deleteLogsBefore(cutoff, options.batchSize);
      deleted += count;
      if (count < options.batchSize) break;
      await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
    }
    if (deleted > 0) logger.info({ deleted, before: new Date(cutoff).toISOString() }, 'log retention');
    return deleted;
  };

  const sweep = (): Promise<number> => {
    running ??= sweepOnce()
      .catch((err: unknown) => {
        logger.error({ err }, 'log retention sweep failed; will try again');
        return 0;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };

  const timer = setInterval(() => void sweep(), options.intervalMs);
  timer.unref();
  return {
    sweep,
    async close() {
      closed = true;
      clearInterval(timer);
      await running;
    },
  };
}
