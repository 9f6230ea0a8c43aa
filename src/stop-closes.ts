/**
 * The last step of a node's stop (stop-plan.ts): closing what it holds open (the store's connections,
 * Redis, the S3 client), in turn, since some close only after another (the semantic cache's last rows
 * before the store). Each close has its share of the time left: what is left over divided among the closes
 * still to come, so a close that ends early leaves its time to the next; and never less than its part of
 * MIN_CLOSES_MS from its own start, so that the event loop held past the closes' end (by a close that runs
 * on it, or a busy or starved process) does not leave the closes after it no time at all, each left though
 * it would have closed at once (less when the stop's cut came so late that it has less left: stop-plan.ts). One that has not ended in its share (a peer that stopped answering: a close
 * waits for a reply that never comes) is named in the log and torn down, its connections destroyed with no
 * reply waited for, so that none is left open in a process that goes on (the gateway embedded in another);
 * then the next goes on. The gateway's own process exits after the last (main.ts).
 */
import type { Logger } from 'pino';
import { settlesBy } from './core/settles-by.js';
import { MIN_CLOSES_MS } from './stop-plan.js';

export interface ClosePart {
  /** What it closes, as the log names it. */
  name: string;
  close(): Promise<void> | void;
  /** Ends at once what `close` waits for (its connections destroyed), once its share has run out; absent
   * when `close` itself waits for no peer. */
  destroy?(): void;
}

/** Closes `parts` in turn within `timeoutMs`, each with its part of `leastMs` at the least; resolves with the
 * names of those that did not close in time. */
export async function closeInTurn(
  parts: readonly ClosePart[],
  timeoutMs: number,
  logger: Logger,
  leastMs = MIN_CLOSES_MS,
): Promise<string[]> {
  const deadline = performance.now() + timeoutMs;
  const late: string[] = [];
  const leastShareMs = leastMs / parts.length;
  for (let i = 0; i < parts.length; i++) {
    const { name, close, destroy } = parts[i];
    const shareMs = Math.max(leastShareMs, (deadline - performance.now()) / (parts.length - i));
    const closing = Promise.resolve()
      .then(close)
      .then(
        () => undefined,
        (error: unknown) => ({ error }),
      );
    if (!(await settlesBy(closing, performance.now() + shareMs))) {
      late.push(name);
      logger.error(
        { part: name, shareMs: Math.round(shareMs) },
        destroy ? 'shutdown: did not close in time; torn down' : 'shutdown: did not close in time; left',
      );
      try {
        destroy?.();
      } catch (err) {
        logger.error({ part: name, err }, 'shutdown: failed to tear down');
      }
      continue;
    }
    const failed = await closing;
    if (failed) logger.error({ part: name, err: failed.error }, 'shutdown: failed to close');
  }
  return late;
}
