/**
 * The background-response worker of one node. Every `pollMs` (and at once when a response is queued on
 * this node) it claims due `response.background` jobs from the store's queue — leased, so no two nodes run
 * one response — and runs each response's call: `callContextFromStoredRequest` with the headers it was
 * created with, `execute` into `StoredResponseSink` (the stored response, `in_progress` then its final
 * state, as the foreground path stores it) in front of the response's event log (a streamed one) or a
 * `BufferSink`. The call is logged, measured and priced as any call is.
 *
 * While it runs, the lease is renewed and the response read every `CANCEL_POLL_MS`: cancelled (here or on
 * another node) or the lease lost, the call is aborted and nothing more of it is written. A node that
 * dies stops renewing; once the lease has run out another node claims the job again: a response whose
 * client had not yet been sent any of the run is run again, up to `BACKGROUND_RUNS` runs; any other is
 * failed, so none stays `in_progress` for ever. A node that stops cleanly gives its runs back without
 * counting them (`jobs.release`), as does a run the store fails before its call (a read of the response,
 * its key or its config: a connection dropped), to run again shortly (retryDelayMs) rather than spend one
 * of the response's runs or fail it, until it has failed so for `retryForMs` in a row (a fault of the
 * gateway's there would run it for ever), when the response is failed with it. A GatewayError before the
 * call (a refusal or a fault of the gateway's own: its stored run cannot be decrypted) would fail the same
 * way each time: the response is failed with it at once. A response whose job fails for good is failed
 * with it, rather than left running with no job. A run the rate limits refuse before it began waits, the
 * response `queued` again, for the policy's window (`Retry-After`) and is run again then, as a batch line
 * is, while that falls within BACKGROUND_RATE_LIMIT_WAIT_MS of the response's creation. Every minute the
 * runs and events of responses that ended more than `eventRetentionMs` ago are removed, and foreground
 * responses a stopped node left `in_progress` (not written for `interruptedAfterMs`) are failed, so that
 * neither they nor a conversation continued from them stay waiting for an answer that will never come.
 */
import { CallAbort } from '../../core/abort.js';
import { GatewayError, type ProviderError } from '../../core/errors.js';
import type { Job, Repositories } from '../../store/types.js';
import { callContextFromStoredRequest } from '../call-context.js';
import { callerKeyRevoked, callerKeyUsable } from '../caller-key.js';
import type { GatewayDeps } from '../deps.js';
import {
  dropEndedRows,
  giveBack,
  jobOwner,
  noteFailure,
  RETRY_FOR_MS,
  RunAgain,
  startJobPoller,
  type CountedRow,
} from '../job-poller.js';
import { execute } from '../execute.js';
import { newRouteState } from '../routing/route-types.js';
import { BufferSink } from '../sink.js';
import type { ModelRequest } from '../../providers/types.js';
import {
  BACKGROUND_JOB,
  BACKGROUND_RATE_LIMIT_WAIT_MS,
  BACKGROUND_RUNS,
  QUEUED_EVENTS,
  RUNNING_STATUSES,
  type BackgroundPayload,
} from './background.js';
import type { BackgroundHub } from './background-hub.js';
import { RateLimitHold } from './rate-limit-hold.js';
import { ResponseEventLog } from './response-event-log.js';
import { ResponseAssembler } from './response-assembler.js';
import type { ResponseObject } from './response-types.js';
import { StoredResponseSink, type SaveResponse } from './stored-response-sink.js';

export interface BackgroundWorkerOptions {
  leaseMs: number;
  pollMs: number;
  /** Background responses this node runs at once. */
  concurrency: number;
  /** How long a streamed response's events are kept once it has ended. */
  eventRetentionMs: number;
  /** How long a foreground response may stay `in_progress` before it is taken for one whose node stopped. */
  interruptedAfterMs: number;
  /** How long a run the store keeps failing before its call is tried again before the response is failed
   * with it (RETRY_FOR_MS by default). */
  retryForMs?: number;
}

/** Interrupted foreground responses failed per minute, at most: a backlog is worked through over minutes. */
const INTERRUPTED_PER_ROUND = 100;

export interface BackgroundWorker {
  poke(): void;
  /** Stops claiming; responses still running when `graceMs` runs out are stopped and given back to the
   * queue (another node, or this one restarted, takes them up). */
  close(graceMs: number): Promise<void>;
}

/** How often a running response is read for a cancel made on another node. */
const CANCEL_POLL_MS = 500;
const PRUNE_EVERY_MS = 60_000;
const RUNNING: readonly string[] = RUNNING_STATUSES;

export function startBackgroundResponseWorker(
  deps: GatewayDeps,
  hub: BackgroundHub,
  options: BackgroundWorkerOptions,
): BackgroundWorker {
  const { store, logger } = deps;
  const owner = jobOwner('responses');
  /** Runs of each job that the store failed before their call, in a row, on this node (retryDelayMs), and
   * since when they fail (failingFor). */
  const failuresInRow = new Map<string, CountedRow>();
  const retryForMs = options.retryForMs ?? RETRY_FOR_MS;
  /** Aborts the calls still running when the grace period of `close` runs out. */
  const stopping = new CallAbort();
  let lastPrune = 0;

  /** Every minute: the ended responses' runs and events, the foreground responses left in progress, and the
   * rows of failures of jobs that have gone on elsewhere. */
  async function sweep(): Promise<void> {
    if (Date.now() - lastPrune < PRUNE_EVERY_MS) return;
    lastPrune = Date.now();
    // The rows of jobs given back and not failed here since (run to their end on another node, maybe).
    dropEndedRows(failuresInRow);
    await store.pruneResponseRuns(Date.now() - options.eventRetentionMs);
    await failInterrupted();
  }

  /** Fails the foreground responses whose node stopped while answering them (see the module's comment). */
  async function failInterrupted(): Promise<void> {
    const left = await store.interruptedResponses(
      Date.now() - options.interruptedAfterMs,
      INTERRUPTED_PER_ROUND,
    );
    for (const stored of left) {
      const assembler = new ResponseAssembler({ ...(stored.body as unknown as ResponseObject) });
      const { response } = assembler.fail(
        new GatewayError(
          'internal_error',
          'The response was interrupted: the gateway node answering it stopped',
        ),
      );
      await store.updateResponse(
        stored.workspace_id,
        stored.id,
        { status: 'failed', body: { ...response } },
        ['in_progress'],
      );
    }
  }

  /** Fails a response whose runs were all cut short (or that cannot be run), with its stream's end. */
  async function giveUp(
    job: Job,
    body: Record<string, unknown>,
    stream: boolean,
    failure: string | GatewayError,
  ) {
    const { workspace_id, response_id } = job.payload as BackgroundPayload;
    const assembler = new ResponseAssembler({ ...(body as unknown as ResponseObject) });
    const error = typeof failure === 'string' ? new GatewayError('internal_error', failure) : failure;
    const { response, events } = assembler.fail(error);
    // The stream's end in the transaction that fails the response: a follower that reads it failed finds
    // the end there to read (follow-response-events.ts).
    const failed = await store.transaction(async (tx) => {
      const updated = await tx.updateResponse(
        workspace_id,
        response_id,
        { status: 'failed', body: { ...response } },
        RUNNING,
      );
      if (!updated || !stream) return updated;
      let next = (await tx.lastResponseEvent(response_id)) + 1;
      await tx.appendResponseEvents(
        response_id,
        events.map((event) => {
          const sequence_number = next++;
          return { sequence_number, event: JSON.stringify({ ...event, sequence_number }) };
        }),
      );
      return updated;
    });
    if (failed && stream) hub.notify(response_id);
  }

  async function runJob(job: Job): Promise<void> {
    const { workspace_id, response_id } = job.payload as BackgroundPayload;
    const abort = new CallAbort();
    /** Why nothing more of the call is written: it was cancelled, the lease is lost, the node stops. */
    let detached: 'cancelled' | 'lost' | 'stopping' | undefined;
    let log: ResponseEventLog | undefined;
    const detach = (why: NonNullable<typeof detached>) => {
      detached ??= why;
      log?.stop();
      abort.abort();
    };
    const onStop = () => detach('stopping');
    stopping.addEventListener('abort', onStop);
    const forget = hub.running(response_id, () => detach('cancelled'));
    let lastBeat = Date.now();
    const watch = setInterval(
      () =>
        void (async () => {
          if (Date.now() - lastBeat >= options.leaseMs / 3) {
            lastBeat = Date.now();
            if (!(await store.jobs.heartbeat(job.id, owner, options.leaseMs))) return detach('lost');
          }
          const current = await store.getResponse(workspace_id, response_id);
          if (!current || current.status === 'cancelled') detach('cancelled');
        })().catch(() => undefined),
      Math.min(CANCEL_POLL_MS, Math.max(options.leaseMs / 3, 10)),
    );
    watch.unref();
    /** Whether the run has come to its call: a failure before it (the store's) spends none of its runs. */
    let calling = false;
    let retrying = false;
    try {
      const stored = await store.getResponse(workspace_id, response_id);
      if (!stored || !RUNNING.includes(stored.status)) {
        await store.jobs.complete(job.id, owner, null);
        return;
      }
      const run = await store.responseRun(workspace_id, response_id);
      const stream = run?.request.stream === true;
      const last = stream ? await store.lastResponseEvent(response_id) : -1;
      // A run the client has seen part of cannot be run again: its next events would not follow.
      const seen = last >= QUEUED_EVENTS.length;
      // Past its runs (those of the jobs it waited out a rate limit on too), or claimed once more after its
      // every attempt was cut short (exhaustedJob).
      const runs = job.attempts + ((job.payload as BackgroundPayload).earlier_runs ?? 0);
      if (!run || runs > BACKGROUND_RUNS || seen) {
        await giveUp(
          job,
          stored.body,
          stream,
          run
            ? 'The response was interrupted: the gateway node running it stopped'
            : 'The response cannot be run: its request is no longer stored',
        );
        await store.jobs.complete(job.id, owner, null);
        return;
      }
      const shell = { ...(stored.body as unknown as ResponseObject), status: 'in_progress' as const };
      if (
        !(await store.updateResponse(
          workspace_id,
          response_id,
          { status: 'in_progress', body: { ...shell } },
          RUNNING,
        ))
      ) {
        await store.jobs.complete(job.id, owner, null);
        return;
      }
      calling = true;
      const waitMs = await runCall(
        job,
        run,
        shell,
        stream ? last : undefined,
        abort,
        (made) => (log = made),
        () => detached,
      );
      if (detached === 'lost') return;
      if (detached === 'stopping') {
        // Given back at once: another node (or this one restarted) takes it up. A stop (a deploy) is not
        // one of the runs a node dies in: it uses none of them up.
        await store.jobs.release(job.id, owner);
        return;
      }
      if (waitMs !== undefined && !detached) {
        await waitForWindow(job, stored.body, waitMs);
        return;
      }
      await store.jobs.complete(job.id, owner, null);
    } catch (err) {
      const before = !calling || err instanceof RunAgain;
      if (before && !(err instanceof GatewayError)) {
        // Before its call, the store failed a read or write of it (a connection dropped): given back, its
        // attempt with it, to run again after a short wait, rather than spend one of its runs or fail it.
        retrying = true;
        const fresh = (now: number) => ({ count: 0, since: now, last: now });
        const { row, tooLong } = noteFailure(failuresInRow, job.id, fresh, retryForMs);
        // Failing in a row for retryForMs, which no passing outage of the store's lasts: the response is
        // failed with it (a fault of the gateway's before the call would run it, every few seconds, for ever).
        if (tooLong) {
          const seconds = Math.round(retryForMs / 1000);
          const failure = new GatewayError(
            'internal_error',
            `The response could not be run: the gateway failed before its call each time it tried, for ${seconds} s`,
          );
          if (await failBeforeCall(job, failure, err)) {
            retrying = false;
            return;
          }
        }
        await giveBack(
          logger,
          'background response',
          { err, job: job.id, response: response_id },
          row.count,
          options.leaseMs,
          (runAt) => store.jobs.release(job.id, owner, runAt),
        );
        return;
      }
      // A refusal or a fault of the gateway's own before the call (its stored run cannot be decrypted)
      // fails the same way each time: the response is failed with it at once.
      if (before && err instanceof GatewayError && (await failBeforeCall(job, err, err))) return;
      logger.error({ err, job: job.id, response: response_id }, 'background response failed to run');
      const message = err instanceof Error ? err.message : String(err);
      const failed = await store.jobs.fail(job.id, owner, message, Date.now() + 1000).catch(() => undefined);
      // Its job's attempts spent: the response is failed too, rather than left running with no job.
      if (failed?.status === 'failed') {
        await failBeforeCall(job, new GatewayError('internal_error', 'The response could not be run'), err);
      }
    } finally {
      if (!retrying) failuresInRow.delete(job.id);
      clearInterval(watch);
      forget();
      stopping.removeEventListener('abort', onStop);
    }
  }

  /**
   * Fails a response that cannot be run (`error`: what failed it before its call, for its run's `cause`),
   * with its stream's end, and completes its job. A streamed response is told by its stored events (its
   * run, which says so too, may be what cannot be read). Says whether that was done: the store failing it
   * too leaves the job to run again.
   */
  async function failBeforeCall(job: Job, error: GatewayError, cause: unknown): Promise<boolean> {
    const { workspace_id, response_id } = job.payload as BackgroundPayload;
    logger.error(
      { err: cause, job: job.id, response: response_id },
      'background response failed before its call',
    );
    try {
      const stored = await store.getResponse(workspace_id, response_id);
      if (stored && RUNNING.includes(stored.status)) {
        const stream = (await store.lastResponseEvent(response_id)) >= 0;
        await giveUp(job, stored.body, stream, error);
      }
      await store.jobs.complete(job.id, owner, null);
      return true;
    } catch (failErr) {
      logger.error({ err: failErr, job: job.id, response: response_id }, 'background response not failed');
      return false;
    }
  }

  /**
   * A run the rate limits refused before it began: the response is `queued` again and runs once the
   * policy's window has room, on a job of its own, so that waiting spends none of the runs a node that
   * dies may need.
   */
  async function waitForWindow(job: Job, body: Record<string, unknown>, waitMs: number): Promise<void> {
    const payload = job.payload as BackgroundPayload;
    const { workspace_id, response_id } = payload;
    // This job's runs before the one refused were cut short by their node: the next job counts them.
    const earlier_runs = (payload.earlier_runs ?? 0) + job.attempts - 1;
    await store.transaction(async (tx) => {
      if (!(await tx.jobs.complete(job.id, owner, null))) return;
      const requeued = await tx.updateResponse(
        workspace_id,
        response_id,
        { status: 'queued', body: { ...body, status: 'queued' } },
        ['in_progress'],
      );
      if (!requeued) return;
      await tx.jobs.enqueue({
        kind: BACKGROUND_JOB,
        workspace_id: job.workspace_id,
        payload: { ...payload, earlier_runs } satisfies BackgroundPayload,
        max_attempts: job.max_attempts,
        run_at_ms: Date.now() + waitMs,
      });
    });
  }

  /** Runs the response's call; answers how long to wait when the rate limits refused it (RateLimitHold). */
  async function runCall(
    job: Job,
    run: NonNullable<Awaited<ReturnType<typeof store.responseRun>>>,
    shell: ResponseObject,
    lastEvent: number | undefined,
    abort: CallAbort,
    madeLog: (log: ResponseEventLog) => void,
    detached: () => string | undefined,
  ): Promise<number | undefined> {
    const { workspace_id, response_id, input_offset } = job.payload as BackgroundPayload;
    const state = newRouteState();
    state.responsesInputOffset = input_offset ?? null;
    const assembler = new ResponseAssembler(shell, () => state.responsesAccount);
    const saveFinal = (repositories: Repositories, response: ResponseObject) =>
      repositories.updateResponse(
        workspace_id,
        response_id,
        { status: response.status, body: { ...response } },
        ['in_progress'],
      );
    let end: ResponseEventLog | BufferSink;
    let save: SaveResponse;
    if (lastEvent !== undefined) {
      const log = new ResponseEventLog(store, hub, response_id, assembler, lastEvent, saveFinal, (err) =>
        logger.error({ err, response: response_id }, 'storing background response events failed'),
      );
      madeLog(log);
      end = log;
      // Stored by the log with the stream's last events, so that none of them comes after it.
      save = (response) => {
        if (!detached()) log.endWith(response);
        return Promise.resolve();
      };
    } else {
      end = new BufferSink();
      save = async (response) => {
        if (detached()) return;
        try {
          await saveFinal(store, response);
        } catch (err) {
          logger.error({ err, response: response_id }, 'storing a response failed');
        }
      };
    }
    const sink = new StoredResponseSink(end, assembler, save);
    const hold = new RateLimitHold(sink, shell.created_at * 1000 + BACKGROUND_RATE_LIMIT_WAIT_MS);
    const request = { endpoint: 'responses', body: run.request } as ModelRequest<'responses'>;
    let calling = false;
    try {
      if (!(await callerKeyUsable(store, run.call.caller))) throw callerKeyRevoked('response');
      const ctx = await callContextFromStoredRequest(deps.lookups, {
        caller: run.call.caller,
        headers: run.call.headers,
        model: run.request.model,
        url: '/v1/responses',
        metadata: run.call.metadata,
        traceId: run.call.trace_id,
        signal: abort,
      });
      calling = true;
      // Thinking comes back (as content_blocks) only when not strict: the Response shows it as reasoning.
      await execute(deps, { ...request, ctx: { ...ctx, strictCompat: false }, state }, hold);
      if (hold.waitMs !== undefined) return hold.waitMs;
    } catch (err) {
      // A read of its key or config the store failed says nothing of the response: thrown on, for runJob
      // to give its job back to run again.
      if (!calling && !(err instanceof GatewayError)) {
        throw new RunAgain('The response could not be run: the store failed', err);
      }
      // The call could not be made (its config, virtual key or API key is gone): the response failed with it.
      const error =
        err instanceof GatewayError
          ? err
          : new GatewayError('internal_error', 'The request could not be made');
      sink.fail(error as GatewayError | ProviderError, error.status);
    }
    await sink.settled;
    if (end instanceof ResponseEventLog) await end.flushed();
    return undefined;
  }

  const poller = startJobPoller(store, logger, {
    kinds: [BACKGROUND_JOB],
    owner,
    name: 'background responses',
    leaseMs: options.leaseMs,
    pollMs: options.pollMs,
    concurrency: options.concurrency,
    run: runJob,
    claimWhenDone: true,
    afterClaims: sweep,
  });
  hub.onQueued = () => poller.poke();
  return {
    poke: () => poller.poke(),
    async close(graceMs) {
      hub.onQueued = () => undefined;
      const grace = setTimeout(() => stopping.abort(), graceMs);
      grace.unref();
      await poller.stop();
      while (poller.running.size > 0) await Promise.allSettled([...poller.running]);
      clearTimeout(grace);
    },
  };
}
