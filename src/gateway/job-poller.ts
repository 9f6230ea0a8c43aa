/**
 * The claim loop of a node's job worker: every `pollMs` (and at once when poked) it claims as many due jobs
 * of its kinds as it has room for — leased from the store's queue, so two nodes never run one job — and
 * runs each, the jobs in flight tracked so that the worker can wait for them when it closes. A round that
 * fails (the store away for a moment) is logged and the next comes `pollMs` later — unless the worker is
 * stopped, when none comes and the log line says so.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Job, Store } from '../store/types.js';

/** A worker's lease owner: unique to the node, the process and the worker (`<host>-<pid>-<random>-<name>`). */
export function jobOwner(name: string): string {
  return `${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}-${name}`;
}

export interface JobPollerOptions {
  kinds: readonly string[];
  /** Who the jobs are leased to (jobOwner). */
  owner: string;
  /** The worker's name in its log lines (`<name>: a round failed; trying again`, or once it is stopped
   * `…; not trying again: the node is stopping`). */
  name: string;
  leaseMs: number;
  pollMs: number;
  /** Jobs this node runs at once. */
  concurrency: number;
  run(job: Job): Promise<void>;
  /** Looks for the next job as soon as one ends, rather than at the next poll. */
  claimWhenDone?: boolean;
  /** Work of the worker's own, after each round's claims (a sweep). */
  afterClaims?(): Promise<void>;
}

export interface JobPoller {
  /** The jobs in flight. */
  readonly running: ReadonlySet<Promise<void>>;
  poke(): void;
  /** Claims nothing more; the jobs in flight run on (`running`). */
  stop(): void;
}

export function startJobPoller(store: Store, logger: Logger, options: JobPollerOptions): JobPoller {
  const running = new Set<Promise<void>>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  // One round at a time: a round started while another awaits its claim would count the same free room
  // and claim it again (a poke, a job ending), running more jobs than the concurrency.
  let claiming = false;
  let again = false;

  function schedule(delayMs: number): void {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(() => void tick(), delayMs);
    timer.unref();
  }

  async function tick(): Promise<void> {
    if (claiming) {
      again = true;
      return;
    }
    claiming = true;
    try {
      const room = options.concurrency - running.size;
      if (room > 0) {
        const claimed = await store.jobs.claim({
          kinds: options.kinds,
          owner: options.owner,
          leaseMs: options.leaseMs,
          limit: room,
        });
        for (const job of claimed) {
          const work = options.run(job).finally(() => {
            running.delete(work);
            if (options.claimWhenDone) schedule(0);
          });
          running.add(work);
        }
      }
      await options.afterClaims?.();
    } catch (err) {
      // One failing once the worker is stopped (the node stopping, its store closed under the round) is
      // the last: no round is scheduled after a stop.
      const next = stopped ? 'not trying again: the node is stopping' : 'trying again';
      logger.error({ err }, `${options.name}: a round failed; ${next}`);
    } finally {
      claiming = false;
    }
    const wanted = again;
    again = false;
    schedule(wanted ? 0 : options.pollMs);
  }

  schedule(0);
  return {
    running,
    poke: () => schedule(0),
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
