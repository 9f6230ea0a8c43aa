/**
 * The worker of one node for batches that run on a provider's Batch API (provider-batches.ts): every
 * `pollMs` (and at once when poked) it claims due `batch.provider_submit` and `batch.provider_poll` jobs
 * from the store's queue — leased, so two nodes never run one job, and a job whose node died is taken over
 * once its lease runs out — and runs them. A poll that finds the batch still running queues the next poll
 * and completes itself in one transaction, so a batch always has exactly one poll queued until it ends.
 */
import { exhaustedJob, type Job } from '../../store/types.js';
import type { GatewayDeps } from '../deps.js';
import { jobOwner, startJobPoller } from '../job-poller.js';
import {
  POLL_JOB,
  PROVIDER_BATCH_JOBS,
  pollDelayMs,
  pollProviderBatch,
  submitProviderBatch,
  SubmissionStopped,
  type ProviderBatchPayload,
} from './provider-batches.js';

export interface ProviderJobWorker {
  poke(): void;
  /** Stops claiming and lets the jobs in flight end; those still sending or waiting for a file, or copying
   * a batch's results, when `graceMs` runs out are stopped and given back to the queue with their attempt
   * (another node, or this one restarted, takes them up). */
  close(graceMs: number): Promise<void>;
}

/** Jobs one node runs at once. */
const MAX_JOBS = 4;
/** A poll that failed is tried again this many times (with growing delays) before the batch fails. */
const POLL_ATTEMPTS = 20;

class LeaseLost extends Error {}

export function startProviderJobWorker(
  deps: GatewayDeps,
  options: { leaseMs: number; pollMs: number },
): ProviderJobWorker {
  const { store, logger } = deps;
  const owner = jobOwner('provider');
  // Aborted when the grace period of `close` runs out: it ends what a job waits on (another node's upload)
  // and the transfers it makes, and the job is given back (provider-batches.ts says what it leaves).
  const stopping = new AbortController();
  /** Completes the job and queues the next poll of its batch, together. */
  async function completeWith(job: Job, nextPollInMs: number | undefined): Promise<void> {
    await store.transaction(async (tx) => {
      if (nextPollInMs !== undefined) {
        await tx.jobs.enqueue({
          kind: POLL_JOB,
          workspace_id: job.workspace_id,
          payload: job.payload,
          max_attempts: POLL_ATTEMPTS,
          run_at_ms: Date.now() + nextPollInMs,
        });
      }
      if (!(await tx.jobs.complete(job.id, owner, null))) throw new LeaseLost();
    });
  }

  async function runJob(job: Job): Promise<void> {
    const heartbeat = setInterval(
      () => void store.jobs.heartbeat(job.id, owner, options.leaseMs).catch(() => undefined),
      Math.max(options.leaseMs / 3, 10),
    );
    heartbeat.unref();
    const { batch_id } = job.payload as ProviderBatchPayload;
    try {
      if (exhaustedJob(job)) {
        const message = 'The gateway node running it stopped during each of its attempts';
        await store.jobs.fail(job.id, owner, message).catch(() => undefined);
        await giveUp(batch_id, message);
        return;
      }
      if (job.kind === POLL_JOB) {
        await completeWith(job, await pollProviderBatch(deps, batch_id, stopping.signal));
      } else {
        // A job claimed again (its last holder failed or died) may have created the provider's batch; a
        // try given back by a node that stopped did not (SubmissionStopped), and counted no attempt.
        const next = await submitProviderBatch(deps, batch_id, job.attempts > 1, stopping.signal);
        await completeWith(job, next === 'poll' ? pollDelayMs(options.pollMs, 0) : undefined);
      }
    } catch (err) {
      if (err instanceof LeaseLost) return;
      if (err instanceof SubmissionStopped || (job.kind === POLL_JOB && stopping.signal.aborted)) {
        // Cut short by this node's stop (a deploy), which says nothing of the batch: a few in a row must
        // not use up its attempts and fail it.
        await store.jobs.release(job.id, owner).catch(() => undefined);
        return;
      }
      logger.warn({ err, job: job.id, kind: job.kind, batch: batch_id }, 'provider batch job failed');
      const message = err instanceof Error ? err.message : String(err);
      await store.jobs
        .fail(job.id, owner, message, Date.now() + pollDelayMs(options.pollMs, job.attempts))
        .catch(() => undefined);
      if (job.attempts >= job.max_attempts) await giveUp(batch_id, message);
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** A batch whose submission or polling failed on every attempt fails, rather than wait for ever. */
  async function giveUp(batchId: string, message: string): Promise<void> {
    await store.batches
      .update(
        batchId,
        {
          status: 'failed',
          failed_at: Math.floor(Date.now() / 1000),
          errors: [{ code: 'provider_unreachable', message, param: null, line: null }],
        },
        ['validating', 'in_progress', 'finalizing', 'cancelling'],
      )
      .catch((err: unknown) => logger.error({ err, batch: batchId }, 'provider batch could not be failed'));
  }

  const poller = startJobPoller(store, logger, {
    kinds: PROVIDER_BATCH_JOBS,
    owner,
    name: 'provider batch worker',
    leaseMs: options.leaseMs,
    pollMs: options.pollMs,
    concurrency: MAX_JOBS,
    run: runJob,
  });
  return {
    poke: () => poller.poke(),
    async close(graceMs) {
      poller.stop();
      const grace = setTimeout(() => stopping.abort(), graceMs);
      grace.unref();
      while (poller.running.size > 0) await Promise.allSettled([...poller.running]);
      clearTimeout(grace);
    },
  };
}
