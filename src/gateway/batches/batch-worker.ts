/**
 * The batch worker of one node. Every `pollMs` (and at once when a line ends) it
 *  1. claims due batch jobs (validation, finalization; `batch-phases.ts`) and runs them under a lease;
 *  2. looks at the running batches: one with no open line left is queued for finalization
 *     (`completed`), as is a cancelled or expired one once no line of it is running any more;
 *  3. claims lines of running batches — as many as the batch's concurrency and the node's allow — and
 *     runs each through the whole pipeline (`callContextFromStoredRequest` with the headers the batch
 *     was created with, `execute` into a `LineSink`), then commits the line's result while it still
 *     holds the line's lease (results that end together are committed together: `settle-queue.ts`).
 *     The line's slot goes to the next line as soon as its call ends, from lines claimed ahead (as many as
 *     the batch's calls on this node once its room is filled, claimed again once fewer than half of those
 *     are left; none for a batch the node runs no line of), so no claim stands between them. A rate-limit
 *     policy's refusal puts the line back until its window opens, and leaves no record (the run that
 *     answers the line does). A line the store failed to read or write for (its batch's call, its key's
 *     check, its stored config, its result) is not answered: it is given back, to run again shortly
 *     (retryDelayMs), until it has failed so for `retryForMs` in a row, when the failure is its answer.
 * Leases of lines in flight are renewed together; a node that dies stops renewing them, and another
 * node (or this one restarted) claims them once they run out. A line answered and committed is never
 * sent again; one in flight when its node died is sent again (its answer was never committed).
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { CallAbort } from '../../core/abort.js';
import { GatewayError } from '../../core/errors.js';
import { longerThan, METADATA_LIMITS } from '../../core/metadata-limits.js';
import type { ModelRequest } from '../../providers/types.js';
import type { BatchCall, ClaimedLine, StoredBatch } from '../../store/file-batch-types.js';
import { isRefusedValue } from '../../store/db-errors.js';
import { exhaustedJob, type Job } from '../../store/types.js';
import {
  callContextFromStoredRequest,
  jobCallIdentity,
  type CallContext,
  type CallerKey,
  type StoredRequestCall,
} from '../call-context.js';
import type { GatewayDeps } from '../deps.js';
import { validateRequest } from '../endpoints.js';
import { execute, refuseCall } from '../execute.js';
import { sequentialId } from '../ids.js';
import {
  claimUnlessStopped,
  dropEndedRows,
  giveBack,
  noteFailure,
  retryDelayMs,
  RETRY_FOR_MS,
  RunAgain,
  type CountedRow,
} from '../job-poller.js';
import { newRouteState } from '../routing/route-types.js';
import type { BufferedResult } from '../sink.js';
import { callerKeyRevoked, callerKeyUsable } from '../caller-key.js';
import { batchEndpoint } from './batch-endpoints.js';
import { sweepExpiredFiles } from './expired-files.js';
import { createSettleQueue } from './settle-queue.js';
import { gatewayFailed, LineSink, rateLimitWaitMs, runsAgainFor, settledLineOf } from './batch-output.js';
import { SharedReads } from './shared-reads.js';
import {
  FINALIZE_JOB,
  finalizeBatch,
  VALIDATE_JOB,
  validateBatch,
  type FinalizePayload,
  type FinalOutcome,
  type ValidatePayload,
} from './batch-phases.js';

export interface BatchWorkerOptions {
  /** Lines this node runs at once, over all batches. */
  nodeConcurrency: number;
  /** A batch's lines on this node at once, when the batch sets none. */
  batchConcurrency: number;
  leaseMs: number;
  pollMs: number;
  /** How long a validation, or a line before its call, the store keeps failing for is tried again before
   * the failure is its answer (RETRY_FOR_MS by default). */
  retryForMs?: number;
}

export interface BatchWorker {
  /** Look for work now (a batch was created or cancelled). */
  poke(): void;
  /** The batches this node keeps reads of (a batch's call, its key's last check). */
  batchesRead(): string[];
  /** Stops claiming, gives back the lines claimed ahead (and the lines and jobs a claim under way brings
   * after), lets the lines and jobs in flight end and commits them; lines still running when `graceMs`
   * runs out are given back, and so is a validation or a finalization (its attempt with it). */
  close(graceMs: number): Promise<void>;
}

const nothing = (): void => undefined;

/** Jobs (validations, finalizations) one node runs at once. */
const MAX_JOBS = 2;
/** How often a node deletes the files that have expired (sweepExpiredFiles). */
const FILE_SWEEP_MS = 60_000;
/** How long a batch's lines start on the last read of its API key before it is read again: a key taken away
 * stops its batch within about this, and a batch of 50,000 lines is not 50,000 reads of it. */
export const BATCH_KEY_CHECK_MS = 1000;
/** How many times a line's call the gateway failed itself (gatewayFailed, runsAgainFor: a store read as it
 * was routed) runs again on one node before the failure is its answer: a fault that is no passing failure
 * of the store's does not run the line for ever. */
const MAX_GATEWAY_FAILURES = 5;
/** The longest wait between two tries of a validation that failed (the store or the blob storage away). */
const VALIDATE_RETRY_MAX_MS = 60_000;

/** Why a line whose call the gateway failed itself runs again (RunAgain), while it may: not its answer. */
const GATEWAY_FAILED = 'The gateway failed the call of the line';

export function startBatchWorker(deps: GatewayDeps, options: BatchWorkerOptions): BatchWorker {
  const { store, logger } = deps;
  const retryForMs = options.retryForMs ?? RETRY_FOR_MS;
  const owner = `${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`;
  /** Aborts the calls of lines, and stops the validations and finalizations, still running when the grace
   * period of `close` runs out. */
  const stopping = new CallAbort();
  /** Lines this node holds (calling, or committing their result), by batch. */
  const leased = new Map<string, Set<number>>();
  /** Lines whose call is under way, by batch (`lines`: over all batches): what concurrency bounds. */
  const calling = new Map<string, number>();
  const settles = createSettleQueue(store.batches, owner);
  const running = new Set<Promise<void>>();
  /** Each batch's call (its caller, headers, metadata), read once for all its lines on this node. */
  const calls = new SharedReads<string, BatchCall | undefined>();
  /** Whether each batch's API key may still make calls: the lines started within BATCH_KEY_CHECK_MS of a
   * read's start (those started together too) share it. */
  const keyChecks = new SharedReads<string, boolean>(BATCH_KEY_CHECK_MS);
  /** Lines of each batch that failed to run in a row on this node (retryDelayMs). */
  const failuresInRow = new Map<string, number>();
  /** The lines that failed to run on this node, by batch, while they fail in a row: how many of those runs
   * the gateway failed the call of itself (RunAgain, GATEWAY_FAILED), and since when they fail (failingFor). */
  const lineFailures = new Map<string, Map<number, CountedRow & { gateway: number }>>();
  let lines = 0;
  let jobs = 0;
  let closed = false;
  let ticking = false;
  let again = false;
  let timer: NodeJS.Timeout | undefined;

  function inFlightOf(batchId: string): number {
    return leased.get(batchId)?.size ?? 0;
  }

  function hold(batchId: string, line: number): void {
    let held = leased.get(batchId);
    if (!held) {
      held = new Set();
      leased.set(batchId, held);
    }
    held.add(line);
  }

  function letGo(batchId: string, line: number): void {
    const held = leased.get(batchId);
    held?.delete(line);
    if (held?.size === 0) leased.delete(batchId);
  }

  /** Lines claimed ahead, by batch: leased (and renewed) but not started yet, so that a slot that frees
   * starts the next line at once instead of after a claim. */
  const queued = new Map<string, ClaimedLine[]>();
  /** Each running batch as last read: what a line ending between polls starts the next one for. */
  const latest = new Map<string, StoredBatch>();

  function roomOf(batch: StoredBatch): number {
    return Math.min(
      options.nodeConcurrency - lines,
      (batch.concurrency ?? options.batchConcurrency) - (calling.get(batch.id) ?? 0),
    );
  }

  /** Starts the batch's queued lines while it has room. */
  function startQueued(batch: StoredBatch): void {
    const queue = queued.get(batch.id);
    if (!queue) return;
    while (queue.length > 0 && roomOf(batch) > 0) track(runLine(batch, queue.shift()!));
    if (queue.length === 0) queued.delete(batch.id);
  }

  /** Gives back the lines claimed ahead of a batch (cancelled, or the node is closing). */
  async function releaseQueued(batchId: string): Promise<void> {
    const queue = queued.get(batchId) ?? [];
    queued.delete(batchId);
    for (const line of queue) {
      await store.batches.releaseLine(batchId, line.line, owner, Date.now());
      letGo(batchId, line.line);
    }
  }

  function track(work: Promise<void>): void {
    running.add(work);
    void work.finally(() => running.delete(work));
  }

  function schedule(delayMs: number): void {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(() => void tick(), delayMs);
    timer.unref();
  }

  /** The running batches as last read; a refill between polls claims lines of these without reading
   * them again (a claim still checks that the batch is running). */
  let active: StoredBatch[] = [];
  let lastPollAt = 0;
  let lastSweepAt = 0;

  async function tick(): Promise<void> {
    if (closed) return;
    if (ticking) {
      again = true;
      return;
    }
    ticking = true;
    try {
      const poll = Date.now() - lastPollAt >= options.pollMs;
      if (poll) {
        lastPollAt = Date.now();
        await claimJobs();
        if (Date.now() - lastSweepAt >= FILE_SWEEP_MS) {
          lastSweepAt = Date.now();
          // Beside the round, not in it: deleting from the blob storage holds no line back.
          track(
            sweepExpiredFiles(store, deps.blobs, lastSweepAt).then(
              () => undefined,
              (err: unknown) => {
                const next = closed ? 'not trying again: the node is stopping' : 'trying again later';
                logger.error({ err }, `batch worker: expired files not deleted; ${next}`);
              },
            ),
          );
        }
        active = await store.batches.withStatus(['in_progress', 'cancelling']);
        latest.clear();
        for (const batch of active) latest.set(batch.id, batch);
        // The reads of a batch no longer running that this node holds no line of: its finalization
        // queued (here, which drops them at once, or on another node), it runs no more lines.
        const done = (batchId: string) => !latest.has(batchId) && !leased.has(batchId);
        calls.forget(done);
        keyChecks.forget(done);
        for (const batchId of failuresInRow.keys()) if (done(batchId)) failuresInRow.delete(batchId);
        for (const [batchId, ofBatch] of lineFailures) {
          // The rows of lines given back and not failed here since (answered on another node, maybe): a
          // batch runs for up to a day.
          dropEndedRows(ofBatch);
          if (done(batchId) || ofBatch.size === 0) {
            lineFailures.delete(batchId);
            failuresInRow.delete(batchId);
          }
        }
      }
      for (const batch of active) {
        if (closed) break;
        await advance(batch, poll);
      }
    } catch (err) {
      // Once closed (the node stopping, its store closed under the round) no round comes after this one.
      const next = closed ? 'not trying again: the node is stopping' : 'trying again';
      logger.error({ err }, `batch worker: a round failed; ${next}`);
    } finally {
      ticking = false;
    }
    if (again) {
      again = false;
      schedule(0);
    } else {
      schedule(options.pollMs);
    }
  }

  async function claimJobs(): Promise<void> {
    if (jobs >= MAX_JOBS) return;
    const claiming = claimUnlessStopped(
      store,
      logger,
      { kinds: [VALIDATE_JOB, FINALIZE_JOB], owner, leaseMs: options.leaseMs, limit: MAX_JOBS - jobs },
      () => closed,
    );
    // The stop waits for it, as for a claim of lines.
    track(claiming.then(nothing, nothing));
    for (const job of await claiming) track(runJob(job));
  }

  async function runJob(job: Job): Promise<void> {
    jobs += 1;
    const heartbeat = setInterval(
      () => void store.jobs.heartbeat(job.id, owner, options.leaseMs).catch(() => undefined),
      Math.max(options.leaseMs / 3, 10),
    );
    heartbeat.unref();
    try {
      if (exhaustedJob(job)) {
        const message = 'The gateway node running it stopped during each of its attempts';
        if (job.kind === FINALIZE_JOB) {
          await finalizeLater(job, message);
        } else {
          await store.jobs.fail(job.id, owner, message);
          await giveUp(job, message);
        }
        return;
      }
      if (job.kind === VALIDATE_JOB) {
        const { batch_id } = job.payload as { batch_id: string };
        const limits = {
          maxLines: deps.settings.batchMaxLines,
          maxLineBytes: deps.settings.bodyLimitBytes,
        };
        if ((await validateBatch(store, deps.blobs, batch_id, limits, stopping)) === 'stopped') {
          // Cut short by this node's stop (a deploy), which says nothing of the input: given back with
          // its attempt, so that deploys in a row do not fail the batch.
          await store.jobs.release(job.id, owner);
          return;
        }
      } else if (
        (await finalizeBatch(store, deps.blobs, job.payload as FinalizePayload, stopping)) === 'stopped'
      ) {
        // As a validation: the files are written afresh by the next attempt, which this one does not use up.
        await store.jobs.release(job.id, owner);
        return;
      }
      await store.jobs.complete(job.id, owner, null);
    } catch (err) {
      logger.error({ err, job: job.id, kind: job.kind }, 'batch job failed');
      const message = err instanceof Error ? err.message : String(err);
      if (job.kind === VALIDATE_JOB) {
        await validateLater(job, err, message);
      } else if (job.attempts >= job.max_attempts) {
        await finalizeLater(job, message);
      } else {
        await store.jobs.fail(job.id, owner, message, Date.now() + 1000);
      }
    } finally {
      clearInterval(heartbeat);
      jobs -= 1;
      again = true;
      schedule(0);
    }
  }

  /** A validation that failed on its every attempt fails its batch, rather than leave it validating, and
   * drops the lines its attempts stored (none of them will run). */
  async function giveUp(job: Job, message: string): Promise<void> {
    const { batch_id } = job.payload as { batch_id: string };
    const error = {
      code: 'internal_error',
      message: `The input could not be read: ${message}`,
      param: null,
      line: null,
    };
    await store.transaction(async (tx) => {
      const failed = await tx.batches.update(
        batch_id,
        { status: 'failed', failed_at: Math.floor(Date.now() / 1000), errors: [error] },
        ['validating'],
      );
      if (failed) await tx.batches.deleteLines(batch_id);
    });
  }

  /**
   * A validation that failed (the store or the blob storage failed a read or write of it) runs again after
   * a wait that grows with its failures in a row (retryDelayMs, up to VALIDATE_RETRY_MAX_MS); once its
   * job's attempts are spent, on a job queued afresh, which carries on the count and when the failures
   * began. Only once they have gone on for `retryForMs` does it fail its batch, or at once when the store
   * refused what it wrote (isRefusedValue): that fails the same way every time. A file whose content is
   * wrong fails its batch at once, with no failure here (validateBatch).
   */
  async function validateLater(job: Job, err: unknown, message: string): Promise<void> {
    const payload = job.payload as ValidatePayload;
    const failures = (payload.earlier_failures ?? 0) + job.attempts;
    const since = payload.failing_since_ms ?? Date.now();
    if (isRefusedValue(err) || Date.now() - since >= retryForMs) {
      await giveUp(job, message);
      // Its batch is failed: nothing is left to run again.
      await store.jobs.complete(job.id, owner, null);
      return;
    }
    const runAt = Date.now() + retryDelayMs(failures, VALIDATE_RETRY_MAX_MS);
    if (job.attempts < job.max_attempts) {
      await store.jobs.fail(job.id, owner, message, runAt);
      return;
    }
    await store.transaction(async (tx) => {
      if (!(await tx.jobs.fail(job.id, owner, message))) return;
      const next: ValidatePayload = { ...payload, failing_since_ms: since, earlier_failures: failures };
      await tx.jobs.enqueue({
        kind: VALIDATE_JOB,
        workspace_id: job.workspace_id,
        payload: next,
        max_attempts: job.max_attempts,
        run_at_ms: runAt,
      });
    });
  }

  /**
   * A finalization that failed on its every attempt (the blob storage or the store down for a while) is
   * queued afresh, to run again a lease's time later: its batch ends only through it (the worker leaves a
   * batch whose finalization is queued alone), and its results stay in the store until it has run.
   */
  async function finalizeLater(job: Job, message: string): Promise<void> {
    await store.transaction(async (tx) => {
      if (!(await tx.jobs.fail(job.id, owner, message))) return;
      await tx.jobs.enqueue({
        kind: FINALIZE_JOB,
        workspace_id: job.workspace_id,
        payload: job.payload,
        max_attempts: job.max_attempts,
        run_at_ms: Date.now() + options.leaseMs,
      });
    });
  }

  function expired(batch: StoredBatch): boolean {
    return batch.expires_at !== null && batch.expires_at * 1000 <= Date.now();
  }

  /** Queues the batch's finalization, once: the flag is set and the job enqueued in one transaction. */
  async function queueFinalize(batch: StoredBatch, outcome: FinalOutcome): Promise<void> {
    await store.transaction(async (tx) => {
      const now = Math.floor(Date.now() / 1000);
      const patch = outcome === 'completed' ? { status: 'finalizing' as const, finalizing_at: now } : {};
      if (!(await tx.batches.markFinalizeQueued(batch.id, batch.status, patch))) return;
      const payload: FinalizePayload = { batch_id: batch.id, outcome };
      await tx.jobs.enqueue({
        kind: FINALIZE_JOB,
        workspace_id: batch.workspace_id,
        payload,
        max_attempts: 10,
      });
    });
    calls.delete(batch.id);
    keyChecks.delete(batch.id);
  }

  /** A batch whose API key was revoked, deleted or has expired runs no more lines: it is cancelled with
   * `api_key_revoked` as its error, and ends as a cancel does; the error, for the line that found it. */
  async function cancelForItsKey(batch: StoredBatch): Promise<GatewayError> {
    const error = callerKeyRevoked('batch');
    const now = Math.floor(Date.now() / 1000);
    const errors = [{ code: error.code, message: error.message, param: null, line: null }];
    await store.batches.update(batch.id, { status: 'cancelling', cancelling_at: now, errors }, [
      'in_progress',
    ]);
    return error;
  }

  /** Claims lines of a running batch; at a poll, also finalizes what is done, cancelled or expired. */
  async function advance(batch: StoredBatch, poll: boolean): Promise<void> {
    if (batch.finalize_queued) return;
    const stopped = batch.status === 'cancelling' || expired(batch);
    if (stopped) {
      if (!poll) return;
      await releaseQueued(batch.id);
      if (inFlightOf(batch.id) === 0 && (await store.batches.liveLeases(batch.id)) === 0) {
        await queueFinalize(batch, batch.status === 'cancelling' ? 'cancelled' : 'expired');
      }
      return;
    }
    startQueued(batch);
    const room = Math.max(roomOf(batch), 0);
    // Claim what fills the room, and lines ahead once fewer than half of those are queued: as many as the
    // batch's calls on this node once the room is filled, each to start as soon as one of them ends (a
    // line's end starts its own batch's next). A batch the node runs no line of (the node at its limit,
    // other batches' lines in its slots) gets none ahead: it could not start them soon, and another node
    // can run them now.
    const ahead = (calling.get(batch.id) ?? 0) + room;
    const queuedCount = queued.get(batch.id)?.length ?? 0;
    if (room > 0 || queuedCount < ahead / 2) {
      // A node that is stopping claims nothing more: what it holds is being given back.
      if (closed) return;
      const limit = room + ahead - queuedCount;
      // The stop waits for a claim under way, so that what the claim brings back is given back before the
      // stop ends (a claim that fails fails the round, which says so).
      const claiming = claimAhead(batch.id, limit);
      track(claiming.then(nothing, nothing));
      const claimed = await claiming;
      if (closed) return;
      startQueued(batch);
      if (claimed.length > 0) return;
    }
    if (queuedCount > 0) return;
    if (!poll && room === 0) return;
    if (inFlightOf(batch.id) > 0) return;
    if (!(await store.batches.hasOpenLines(batch.id))) await queueFinalize(batch, 'completed');
  }

  /** Claims lines of a batch and queues them. The stop gives back the lines queued when it begins; a claim
   * under way then comes back after, so it gives back what it claimed itself, rather than leave those lines
   * leased to a node that is gone until their lease runs out. */
  async function claimAhead(batchId: string, limit: number): Promise<ClaimedLine[]> {
    const claimed = await store.batches.claimLines(batchId, owner, options.leaseMs, limit);
    for (const line of claimed) hold(batchId, line.line);
    queued.set(batchId, [...(queued.get(batchId) ?? []), ...claimed]);
    if (!closed) return claimed;
    await releaseQueued(batchId).catch((err: unknown) => {
      logger.error({ err, batch: batchId }, 'batch worker: lines claimed ahead not given back');
    });
    return [];
  }

  function callOf(batchId: string): Promise<BatchCall | undefined> {
    return calls.get(batchId, () => store.batches.callOf(batchId));
  }

  function keyUsable(batchId: string, caller: CallerKey): Promise<boolean> {
    return keyChecks.get(batchId, () => callerKeyUsable(store, caller));
  }

  async function answer(
    batch: StoredBatch,
    line: ClaimedLine,
  ): Promise<{ result: BufferedResult; callId: string; cost: number | null }> {
    const call = await callOf(batch.id);
    const endpoint = batchEndpoint(batch.endpoint);
    if (!call || !endpoint) throw new GatewayError('internal_error', `Batch ${batch.id} cannot be run`);
    const mayRunAgain = (lineFailures.get(batch.id)?.get(line.line)?.gateway ?? 0) < MAX_GATEWAY_FAILURES;
    const state = newRouteState();
    const runsAgain = (cause: unknown) => mayRunAgain && runsAgainFor(cause, state);
    const sink = new LineSink(runsAgain);
    // Drawn before the call's context, so that a line refused before its call has a request_id in the
    // error file too, as every line of OpenAI's has.
    const callId = sequentialId();
    const body = JSON.parse(line.body) as Record<string, unknown>;
    const job: StoredRequestCall = {
      caller: call.caller,
      headers: call.headers,
      url: batch.endpoint,
      metadata: lineMetadata(call.metadata, batch.id, line.custom_id),
      traceId: call.trace_id,
      requestId: callId,
      signal: stopping,
      runAgainIfCut: true,
      // Names the line's provider when the batch's headers name none, as a direct call's body does.
      model: body.model,
    };
    // Outside the refusal below, as the read of the batch's call: a read or write of the key's check the
    // store failed (a connection dropped) says nothing of the line, which is not answered for it but run
    // again (runLine); so are the other lines that shared that read.
    const revoked = (await keyUsable(batch.id, call.caller)) ? undefined : await cancelForItsKey(batch);
    let ctx: CallContext | undefined;
    let request: ModelRequest;
    try {
      if (revoked) throw revoked;
      ctx = await callContextFromStoredRequest(deps.lookups, job);
      request = validateRequest(endpoint, body);
    } catch (err) {
      // A read the store could not answer (a connection dropped) says nothing of the line: it is given
      // back and run again (runLine), as when the key's check fails.
      if (!(err instanceof GatewayError)) throw err;
      // Refused before it was a call (its stored config or virtual key deleted since the batch was
      // created, its API key revoked, its body invalid): answered with the error, at no cost, and recorded
      // as a direct call refused so is.
      const refused = { endpoint: endpoint.kind, body } as ModelRequest;
      refuseCall(deps, { ...refused, ctx: ctx ?? jobCallIdentity(job) }, err, sink);
      return { result: await sink.result, callId, cost: 0 };
    }
    // A call the gateway could not make cost nothing.
    let cost: number | null = 0;
    try {
      const executed = execute(deps, { ...request, ctx, state }, sink);
      // The line is answered once the sink has its answer (the call's cost is known by then): `execute`
      // goes on waiting for the config's async hooks, whose results are for the line's record only.
      executed.catch((err: unknown) =>
        logger.error(
          { err, batch: batch.id, line: line.line },
          'batch line: the call failed after its answer',
        ),
      );
      await Promise.race([sink.result, executed]);
      const result = await sink.result;
      // The gateway failed the call itself (the store failed a read as it was routed): given back, to run
      // again (runLine), and left out of the log (LineSink), when the line runs again for it (runsAgainFor:
      // a fault once a provider was called is the line's answer at once).
      if (sink.heldBack && result.kind === 'error' && gatewayFailed(result.error)) {
        throw new RunAgain(GATEWAY_FAILED, result.error.cause);
      }
      cost = state.cost;
    } catch (err) {
      if (err instanceof RunAgain) throw err;
      if (!(err instanceof GatewayError) && runsAgain(err)) throw new RunAgain(GATEWAY_FAILED, err);
      // The call failed without an answer: the line's answer is the error.
      const error =
        err instanceof GatewayError
          ? err
          : new GatewayError('internal_error', 'The request could not be made');
      sink.fail(error, error.status);
    }
    return { result: await sink.result, callId, cost };
  }

  /** Looks for work again as soon as the current round ends. */
  function refill(): void {
    again = true;
    schedule(0);
  }

  /**
   * Answers a line that failed to run for retryForMs in a row with a 500 (`internal_error`) in its batch's
   * error file. Says whether that was committed: a commit the store fails too leaves the line to run again.
   */
  async function answerFailing(batch: StoredBatch, line: ClaimedLine, err: unknown): Promise<boolean> {
    const seconds = Math.round(retryForMs / 1000);
    const error = new GatewayError(
      'internal_error',
      `The request could not be run: the gateway failed before its call each time it tried, for ${seconds} s`,
    );
    const ref = {
      batchId: batch.id,
      line: line.line,
      customId: line.custom_id,
      callId: sequentialId(),
      cost: 0,
    };
    const result: BufferedResult = { kind: 'error', error, status: error.status };
    logger.error(
      { err, batch: batch.id, line: line.line },
      'batch line failed to run for too long; answered with the failure',
    );
    try {
      const settled = await settles.settle(batch.id, line.line, settledLineOf(ref, result));
      if (!settled)
        logger.warn({ batch: batch.id, line: line.line }, 'batch line lease lost before its result');
      lineFailures.get(batch.id)?.delete(line.line);
      return true;
    } catch (settleErr) {
      logger.error({ err: settleErr, batch: batch.id, line: line.line }, 'batch line failure not recorded');
      return false;
    }
  }

  async function runLine(batch: StoredBatch, line: ClaimedLine): Promise<void> {
    lines += 1;
    calling.set(batch.id, (calling.get(batch.id) ?? 0) + 1);
    let inCall = true;
    // The slot is free once the call has ended: the next line starts while this one's result is being
    // committed (the line stays leased, and renewed, until then).
    const endCall = () => {
      if (!inCall) return;
      inCall = false;
      lines -= 1;
      const left = (calling.get(batch.id) ?? 1) - 1;
      if (left > 0) calling.set(batch.id, left);
      else calling.delete(batch.id);
      const current = latest.get(batch.id);
      if (!closed && current?.status === 'in_progress') startQueued(current);
      refill();
    };
    try {
      const { result, callId, cost } = await answer(batch, line);
      failuresInRow.delete(batch.id);
      endCall();
      // A call the stop failed (cut) is given back, to be run again; so is any error once the stop has
      // begun, an error answer that came in whole before the cut too (the two are not told apart). A
      // successful answer that came in before the cut is the line's, and is committed like any other.
      if (stopping.aborted && result.kind === 'error') {
        await store.batches.releaseLine(batch.id, line.line, owner, Date.now());
        return;
      }
      const waitMs = rateLimitWaitMs(result);
      if (waitMs !== undefined) {
        await store.batches.releaseLine(batch.id, line.line, owner, Date.now() + waitMs);
        lineFailures.get(batch.id)?.delete(line.line);
        return;
      }
      const ref = { batchId: batch.id, line: line.line, customId: line.custom_id, callId, cost };
      const settled = await settles.settle(batch.id, line.line, settledLineOf(ref, result));
      if (!settled)
        logger.warn({ batch: batch.id, line: line.line }, 'batch line lease lost before its result');
      // Its failures in a row end once its result is committed: one the store fails to commit is another.
      lineFailures.get(batch.id)?.delete(line.line);
    } catch (err) {
      // Not answered (the store failed a read or write of it): given back, to run again after a short wait
      // rather than once its lease has run out. A give-back the store fails too leaves the lease to run out.
      const failures = (failuresInRow.get(batch.id) ?? 0) + 1;
      failuresInRow.set(batch.id, failures);
      let ofBatch = lineFailures.get(batch.id);
      if (!ofBatch) lineFailures.set(batch.id, (ofBatch = new Map()));
      const fresh = (now: number) => ({ count: 0, gateway: 0, since: now, last: now });
      const { row, tooLong } = noteFailure(ofBatch, line.line, fresh, retryForMs);
      if (err instanceof RunAgain) row.gateway += 1;
      // Failing in a row for retryForMs, which no passing outage of the store's lasts: answered with the
      // failure (a fault of the gateway's before the call would run the line, every few seconds, for ever).
      if (tooLong && (await answerFailing(batch, line, err))) return;
      await giveBack(
        logger,
        'batch line',
        { err, batch: batch.id, line: line.line },
        failures,
        options.leaseMs,
        (runAt) => store.batches.releaseLine(batch.id, line.line, owner, runAt),
      );
    } finally {
      endCall();
      letGo(batch.id, line.line);
      refill();
    }
  }

  const heartbeat = setInterval(
    () => {
      for (const [batchId, held] of leased) {
        store.batches.heartbeatLines(batchId, [...held], owner, options.leaseMs).catch((err: unknown) => {
          logger.error({ err }, 'batch worker: lease renewal failed');
        });
      }
    },
    Math.max(options.leaseMs / 3, 10),
  );
  heartbeat.unref();
  schedule(0);

  return {
    poke() {
      lastPollAt = 0;
      again = true;
      schedule(0);
    },
    batchesRead() {
      return [...new Set([...calls.keys(), ...keyChecks.keys()])];
    },
    async close(graceMs) {
      closed = true;
      clearTimeout(timer);
      for (const batchId of [...queued.keys()]) {
        await releaseQueued(batchId).catch((err: unknown) => {
          logger.error({ err, batch: batchId }, 'batch worker: lines claimed ahead not given back');
        });
      }
      const grace = setTimeout(() => stopping.abort(), graceMs);
      grace.unref();
      while (running.size > 0) await Promise.allSettled([...running]);
      clearTimeout(grace);
      clearInterval(heartbeat);
    },
  };
}

/**
 * A line's record is found by its batch and its custom_id, beside the metadata of the request that made
 * the batch, as a provider batch's lines are; a custom_id longer than a metadata value is left out.
 */
function lineMetadata(
  metadata: Record<string, string> | undefined,
  batchId: string,
  customId: string,
): Record<string, string> {
  const own: Record<string, string> = { ...metadata, batch_id: batchId };
  if (!longerThan(customId, METADATA_LIMITS.valueLength)) own.custom_id = customId;
  return own;
}
