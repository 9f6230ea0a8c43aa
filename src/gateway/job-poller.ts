/**
 * The claim loop of a node's job worker: every `pollMs` (and at once when poked) it claims as many due jobs
 * of its kinds as it has room for — leased from the store's queue, so two nodes never run one job — and
 * runs each, the jobs in flight tracked so that the worker can wait for them when it closes. A round that
 * fails (the store away for a moment) is logged and the next comes `pollMs` later — unless the worker is
 * stopped, when none comes and the log line says so. A claim under way when the worker stops gives back
 * what it brings (claimUnlessStopped), and the stop waits for it.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Job, JobRepository, Store } from '../store/types.js';

/** The shortest and the longest wait before a job (a batch line, a background response) the store failed
 * for runs again (retryDelayMs). */
const RETRY_BASE_MS = 100;
export const RETRY_MAX_MS = 5000;
/**
 * How long work the store (or the blob storage) keeps failing for is tried again, from its first failure in
 * a row, before the failure is its answer: a batch's validation, a batch line or a background response
 * before its call. An outage of a few minutes (a failover, a restart of the database) passes within it; a
 * fault that fails the same way every time does not run for ever.
 */
export const RETRY_FOR_MS = 10 * 60_000;
/** A failure this long after the one before it on a node begins a new row: the work ran on another node
 * meanwhile, or waited (a rate limit's window), and the node knows nothing of that. */
const FAILURE_GAP_MS = 2 * 60_000;

/** One piece of work's failures in a row on a node (performance.now() times): since when, and the last. */
export interface FailureRow {
  since: number;
  last: number;
}

/** Notes a failure of the row's work now; answers how long its failures in a row have gone on, ms. */
export function failingFor(row: FailureRow, now = performance.now()): number {
  if (now - row.last > FAILURE_GAP_MS) row.since = now;
  row.last = now;
  return now - row.since;
}

/**
 * Work stopped before its answer by a failure that says nothing of it (the store's failing as it was read
 * or routed): thrown for its worker to give it back, to run again (giveBack), not to answer it with it.
 */
export class RunAgain extends Error {
  constructor(message: string, cause: unknown) {
    super(message, { cause });
  }
}

/** A piece of work's failures in a row on a node, counted (retryDelayMs). */
export interface CountedRow extends FailureRow {
  count: number;
}

/**
 * Notes a failure of the work of `rows[key]` now, beginning its row if it has none: answers its row, and
 * whether its failures in a row have gone on for `retryForMs` (failingFor), when its failure is to be its
 * answer rather than run again.
 */
export function noteFailure<K, R extends CountedRow>(
  rows: Map<K, R>,
  key: K,
  fresh: (now: number) => R,
  retryForMs: number,
): { row: R; tooLong: boolean } {
  const now = performance.now();
  let row = rows.get(key);
  if (!row) rows.set(key, (row = fresh(now)));
  row.count += 1;
  return { row, tooLong: failingFor(row, now) >= retryForMs };
}

/**
 * Gives work that failed to run (for `err`) back to its queue, to run again after retryDelayMs of its
 * `failures` in a row (bounded by RETRY_MAX_MS, and by the lease: after one, any node could claim it
 * anyway), and logs it so (`what`, `fields`). A give-back the store fails too leaves the lease to run out.
 */
export async function giveBack(
  logger: Logger,
  what: string,
  fields: Record<string, unknown>,
  failures: number,
  leaseMs: number,
  release: (runAtMs: number) => Promise<unknown>,
): Promise<void> {
  const delayMs = retryDelayMs(failures, Math.min(RETRY_MAX_MS, leaseMs));
  logger.error({ ...fields, retryInMs: Math.round(delayMs) }, `${what} could not be run; it will be retried`);
  await release(Date.now() + delayMs).catch((releaseErr: unknown) => {
    logger.error(
      { ...fields, err: releaseErr },
      `${what} not given back; it runs again once its lease runs out`,
    );
  });
}

/**
 * Drops the rows of work that has not failed on the node for longer than FAILURE_GAP_MS: it was given back
 * and may have run to its end on another node, which the node never hears of, and its next failure here
 * would begin a new row anyway. A worker sweeps its rows so, or they would stay for the life of its process.
 */
export function dropEndedRows<K>(rows: Map<K, FailureRow>, now = performance.now()): void {
  for (const [key, row] of rows) if (now - row.last > FAILURE_GAP_MS) rows.delete(key);
}

/**
 * How long a job that failed to run for its store (a read or write failed: a connection dropped) waits
 * before it runs again, after `failures` such failures in a row: `100 ms·2^(failures-1)`, up to `boundMs`
 * (RETRY_MAX_MS, or a lease if shorter: after one, any node could claim it anyway), less up to a half at
 * random so that the jobs (and nodes) that failed together do not all come back at once.
 */
export function retryDelayMs(failures: number, boundMs: number): number {
  const full = Math.min(RETRY_BASE_MS * 2 ** Math.min(Math.max(failures - 1, 0), 16), boundMs);
  return full * (0.5 + Math.random() / 2);
}

/** A worker's lease owner: unique to the node, the process and the worker (`<host>-<pid>-<random>-<name>`). */
export function jobOwner(name: string): string {
  return `${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}-${name}`;
}

/**
 * Claims due jobs for a worker that may be stopping: none once `stopped()`, and a claim that comes back
 * after the stop began gives its jobs back to the queue, their attempts with them (`jobs.release`), rather
 * than start them on a node that is going, its store about to close; another node takes them at once
 * instead of after their lease has run out. The stop waits for a claim under way, so that this is done
 * before it ends.
 */
export async function claimUnlessStopped(
  store: Store,
  logger: Logger,
  claim: Parameters<JobRepository['claim']>[0],
  stopped: () => boolean,
): Promise<Job[]> {
  if (stopped()) return [];
  const claimed = await store.jobs.claim(claim);
  if (!stopped()) return claimed;
  for (const job of claimed) {
    await store.jobs.release(job.id, claim.owner).catch((err: unknown) => {
      logger.error({ err, job: job.id }, 'a job claimed as the node stopped was not given back');
    });
  }
  return [];
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
  /** Claims nothing more, and gives back what a claim under way brings; resolves once that is done. The
   * jobs in flight run on (`running`). */
  stop(): Promise<void>;
}

export function startJobPoller(store: Store, logger: Logger, options: JobPollerOptions): JobPoller {
  const running = new Set<Promise<void>>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  // One round at a time: a round started while another awaits its claim would count the same free room
  // and claim it again (a poke, a job ending), running more jobs than the concurrency.
  let claiming = false;
  let again = false;
  /** The claim under way, which a stop waits for. */
  let claim: Promise<unknown> = Promise.resolve();

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
        const claiming = claimUnlessStopped(
          store,
          logger,
          { kinds: options.kinds, owner: options.owner, leaseMs: options.leaseMs, limit: room },
          () => stopped,
        );
        claim = claiming.catch(() => undefined);
        const claimed = await claiming;
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
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await claim;
    },
  };
}
