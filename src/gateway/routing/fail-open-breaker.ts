/**
 * The circuit breaker as calls use it: failing open. Its state lives in the shared state (Redis with
 * REDIS_URL); when that cannot be read or written, the breaker is no reason to fail a call: a read that
 * fails lets the call through as if the circuit were closed, and a write that fails (the call's outcome,
 * a probe given back) is dropped, so an answer the provider already gave (and billed) reaches the client.
 * The circuit only protects the provider; an outage of its bookkeeping must not become one of the calls.
 *
 * Each failure is counted (`stats`, the metric `gateway_breaker_state_errors_total`) and logged, at most
 * one line per LOG_EVERY_MS with the number of failures since the last line.
 */
import type { Logger } from 'pino';
import type { Breaker, BreakerConfig, BreakerPass } from '../../state/index.js';
import type { BreakerStateErrors, GuardedBreaker } from '../pipeline-types.js';

const LOG_EVERY_MS = 10_000;

export function failOpenBreaker(breaker: Breaker, logger: Logger): GuardedBreaker {
  const stats: BreakerStateErrors = { read: 0, write: 0 };
  let lastLogged = -Infinity;
  let unlogged = 0;

  function failed(operation: keyof BreakerStateErrors, err: unknown): void {
    stats[operation]++;
    unlogged++;
    const now = performance.now();
    if (now - lastLogged < LOG_EVERY_MS) return;
    logger.warn(
      { err, failures: unlogged },
      'circuit breaker: its state (Redis) cannot be reached; calls go through as if their circuit were closed',
    );
    lastLogged = now;
    unlogged = 0;
  }

  async function write(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      failed('write', err);
    }
  }

  return {
    stats,
    async canPass(key: string, cfg: BreakerConfig): Promise<BreakerPass> {
      try {
        return await breaker.canPass(key, cfg);
      } catch (err) {
        failed('read', err);
        // Of no generation: its outcome, should the state be back by then, is not counted.
        return { state: 'closed', ticket: '' };
      }
    },
    recordSuccess: (key, pass) => write(() => breaker.recordSuccess(key, pass)),
    recordFailure: (key, cfg, pass) => write(() => breaker.recordFailure(key, cfg, pass)),
    releaseProbe: (key, pass) => write(() => breaker.releaseProbe(key, pass)),
  };
}
