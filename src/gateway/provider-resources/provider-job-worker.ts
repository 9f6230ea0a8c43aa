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
  type ProviderBatchPayload,
} from './provider-batches.js';

export interface ProviderJobWorker {
  poke(): void;
  close(): Promise<void>;
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
  // Ends what a job waits on (another node's upload) when the node closes; the job is tried again.
  const closing = new AbortController();
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
        await completeWith(job, await pollProviderBatch(deps, batch_id));
      } else {
        // A job claimed again (its last holder failed or died) may have created the provider's batch.
        const next = await submitProviderBatch(deps, batch_id, job.attempts > 1, closing.signal);
        await completeWith(job, next === 'poll' ? pollDelayMs(options.pollMs, 0) : undefined);
      }
    } catch (err) {
      if (err instanceof LeaseLost) return;
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
    async close() {
      poller.stop();
      closing.abort();
      while (poller.running.size > 0) await Promise.allSettled([...poller.running]);
    },
  };
}
