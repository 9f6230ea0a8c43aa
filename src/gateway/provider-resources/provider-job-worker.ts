/**
 * The worker of one node for batches that run on a provider's Batch API (provider-batches.ts): every
 * `pollMs` (and at once when poked) it claims due `batch.provider_submit` and `batch.provider_poll` jobs
 * from the store's queue — leased, so two nodes never run one job, and a job whose node died is taken over
 * once its lease runs out — and runs them. A poll that finds the batch still running queues the next poll
 * and completes itself in one transaction, so a batch always has exactly one poll queued until it ends.
 */
import { GatewayError, ProviderError } from '../../core/errors.js';
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
/** A poll that failed otherwise than by an outage is tried again this many times (with growing delays)
 * before the batch fails. */
const POLL_ATTEMPTS = 20;
/** How long after the end of its completion window (`expires_at`) a batch whose provider cannot be
 * reached is still polled: the provider may have run it meanwhile, and its output is the client's. */
const OUTAGE_GRACE_MS = 24 * 60 * 60_000;

/** The poll job's payload during an outage: since when, and after how many polls in a row, the provider
 * could not be reached. */
interface OutagePayload extends ProviderBatchPayload {
  unreachable_since_ms?: number;
  failed_polls?: number;
}

/** A failure that says the provider could not be reached, not what became of the batch: no answer, a
 * timeout, the provider's own failure (5xx) or its rate limit (429). */
function outage(err: unknown): boolean {
  if (err instanceof ProviderError) return err.status >= 500 || err.status === 429;
  return (
    err instanceof GatewayError && (err.code === 'upstream_unreachable' || err.code === 'request_timeout')
  );
}

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
  async function completeWith(
    job: Job,
    nextPollInMs: number | undefined,
    payload: OutagePayload = { batch_id: (job.payload as ProviderBatchPayload).batch_id },
  ): Promise<void> {
    await store.transaction(async (tx) => {
      if (nextPollInMs !== undefined) {
        await tx.jobs.enqueue({
          kind: POLL_JOB,
          workspace_id: job.workspace_id,
          payload,
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
        await completeWith(job, next === 'poll' ? pollDelayMs(deps.settings, 0) : undefined);
      }
    } catch (err) {
      if (err instanceof LeaseLost) return;
      if (err instanceof SubmissionStopped || (job.kind === POLL_JOB && stopping.signal.aborted)) {
        // Cut short by this node's stop (a deploy), which says nothing of the batch: a few in a row must
        // not use up its attempts and fail it.
        await store.jobs.release(job.id, owner).catch(() => undefined);
        return;
      }
      if (job.kind === POLL_JOB && outage(err)) {
        await pollAfterOutage(job, err);
        return;
      }
      logger.warn({ err, job: job.id, kind: job.kind, batch: batch_id }, 'provider batch job failed');
      const message = err instanceof Error ? err.message : String(err);
      await store.jobs
        .fail(job.id, owner, message, Date.now() + pollDelayMs(deps.settings, job.attempts))
        .catch(() => undefined);
      if (job.attempts >= job.max_attempts) await giveUp(batch_id, message);
    } finally {
      clearInterval(heartbeat);
    }
  }

  /**
   * A poll that could not reach the provider. The batch may still be running there, and finish: it is
   * polled on, with the same backoff, its row left as the provider last showed it, until a day after its
   * completion window ended (the provider ends it by then) — each failed poll queues the next one with
   * the outage's start, so the job's attempts are not used up by it. Past that bound the batch fails,
   * saying since when the provider could not be reached.
   */
  async function pollAfterOutage(job: Job, err: unknown): Promise<void> {
    const payload = job.payload as OutagePayload;
    const since = payload.unreachable_since_ms ?? Date.now();
    const failedPolls = (payload.failed_polls ?? 0) + 1;
    const reason = err instanceof Error ? err.message : String(err);
    const expiresAt = (await store.batches.getById(payload.batch_id))?.expires_at;
    const polledOn = expiresAt == null || Date.now() < expiresAt * 1000 + OUTAGE_GRACE_MS;
    const message = polledOn
      ? undefined
      : `The provider could not be reached since ${new Date(since).toISOString()} ` +
        `(${failedPolls} polls in a row, the last: ${reason}); the batch's completion window ended at ` +
        `${new Date((expiresAt ?? 0) * 1000).toISOString()}`;
    logger.warn(
      { err, job: job.id, batch: payload.batch_id, unreachable_since: new Date(since).toISOString() },
      message ?? 'provider batch: the provider could not be reached; polling on',
    );
    const next: OutagePayload = {
      batch_id: payload.batch_id,
      unreachable_since_ms: since,
      failed_polls: failedPolls,
    };
    // Failed before the job ends, so that a node dying in between leaves a poll that finds it ended.
    if (message) await giveUp(payload.batch_id, message);
    try {
      await completeWith(job, polledOn ? pollDelayMs(deps.settings, failedPolls) : undefined, next);
    } catch (failure) {
      if (failure instanceof LeaseLost) return;
      // The store failed: the job goes back to the queue as any failed attempt does.
      await store.jobs
        .fail(job.id, owner, reason, Date.now() + pollDelayMs(deps.settings, failedPolls))
        .catch(() => undefined);
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
      const grace = setTimeout(() => stopping.abort(), graceMs);
      grace.unref();
      await poller.stop();
      while (poller.running.size > 0) await Promise.allSettled([...poller.running]);
      clearTimeout(grace);
    },
  };
}
