/**
 * Batches run on a provider's own Batch API (`completion_window: "24h"`). The gateway keeps the batch's
 * row (its id, the workspace's view) and two jobs of the store's queue do the work, leased to one node at
 * a time (provider-job-worker.ts):
 *  - `batch.provider_submit`: sends the input file to the provider's Files API (once per account,
 *    provider-files.ts) and creates the provider's batch, named in its metadata (`gateway_batch_id`) so
 *    that a submission tried again after a crash finds the batch an earlier try created instead of
 *    creating a second one (the Batch API takes no idempotency key);
 *  - `batch.provider_poll`: reads the provider's batch, mirrors its status, timestamps, `request_counts`,
 *    `errors` and `usage` into the gateway's row, and queues itself again with a growing delay; once the
 *    provider's batch has ended it copies the output and error files into the gateway's file store (ids
 *    derived from the batch's, so a poll run twice writes the same files) and commits the final state.
 * The managed-batch worker never touches these rows: they are created with `finalize_queued` set, which
 * tells it that the batch's end is someone else's to write.
 */
import { GatewayError, ProviderError } from '../../core/errors.js';
import {
  BATCH_TIMES,
  type BatchLineError,
  type BatchPatch,
  type BatchStatus,
  type BatchUsage,
  type StoredBatch,
  type StoredFile,
} from '../../store/file-batch-types.js';
import type { Repositories } from '../../store/types.js';
import { fileKey, resultFileExpiry, resultFileIds } from '../batches/batch-phases.js';
import type { GatewayDeps } from '../deps.js';
import { ListOrder } from './list-order.js';
import { logProviderBatchLines } from './provider-batch-log.js';
import type { AbortSignalLike } from '../../core/abort.js';
import { createWithCopies, gatewayFileOf, UploadWaitEnded, type LineRewrite } from './provider-files.js';
import { callResource, jsonBody, listPages, openResource } from './resource-client.js';
import { resourceTarget, type ResourceTarget } from './resource-target.js';
import { storedCallOf, type CallOrigin } from './stored-call.js';

export const SUBMIT_JOB = 'batch.provider_submit';
export const POLL_JOB = 'batch.provider_poll';
export const PROVIDER_BATCH_JOBS = [SUBMIT_JOB, POLL_JOB] as const;

export interface ProviderBatchPayload {
  batch_id: string;
}

type Json = Record<string, unknown>;

const EXPIRY_SECONDS = 24 * 60 * 60;
const ENDED = ['completed', 'failed', 'expired', 'cancelled'] as const;
const MIRRORED: readonly BatchStatus[] = ['validating', 'in_progress', 'finalizing', 'cancelling'];
/** The metadata key that names the gateway's batch on the provider's. */
export const GATEWAY_BATCH_KEY = 'gateway_batch_id';
/** Metadata pairs a provider's batch may hold (OpenAI's limit). */
const MAX_METADATA_PAIRS = 16;
/** Pages of the account's newest batches read to find an earlier try's batch. */
const MAX_SEARCH_PAGES = 10;
/** How far the provider's clock may run behind ours when telling batches older than ours apart. */
const CLOCK_SKEW_SECONDS = 300;
/** How often a submission reads its batch's row while it runs (a cancel, the end of its window). */
const SUBMISSION_WATCH_MS = 1_000;

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** The delay before poll number `polls` (0-based): the worker's poll interval, doubled each time, up to
 * `GATEWAY_BATCH_POLL_MAX_MS`. */
export function pollDelayMs(settings: GatewayDeps['settings'], polls: number): number {
  return Math.min(settings.batchPollMs * 2 ** Math.min(polls, 20), settings.batchPollMaxMs);
}

/** Creates the gateway's batch and queues its submission; refuses at once a provider without a Batch API. */
export async function createProviderBatch(
  deps: GatewayDeps,
  origin: CallOrigin,
  input: {
    endpoint: string;
    input_file_id: string;
    metadata: Record<string, string> | null;
    /** Seconds after their copy into the gateway the output and error files expire; null: kept. */
    output_expires_after: number | null;
  },
): Promise<StoredBatch> {
  const workspaceId = origin.apiKey.workspace_id;
  await resourceTarget(deps, origin.headers, workspaceId, 'batches');
  return deps.store.transaction(async (tx) => {
    const created = await tx.batches.create({
      workspace_id: workspaceId,
      endpoint: input.endpoint,
      input_file_id: input.input_file_id,
      completion_window: '24h',
      metadata: input.metadata,
      concurrency: null,
      expires_at: nowSeconds() + EXPIRY_SECONDS,
      output_expires_after: input.output_expires_after,
      call: storedCallOf(origin),
    });
    // The managed-batch worker leaves a batch whose finalization is queued alone.
    const batch = await tx.batches.update(created.id, { finalize_queued: true });
    const payload: ProviderBatchPayload = { batch_id: created.id };
    await tx.jobs.enqueue({ kind: SUBMIT_JOB, workspace_id: workspaceId, payload, max_attempts: 5 });
    return batch ?? created;
  });
}

async function targetOf(deps: GatewayDeps, batch: StoredBatch): Promise<ResourceTarget> {
  const call = await deps.store.batches.callOf(batch.id);
  if (!call) throw new GatewayError('not_found', `Batch ${batch.id} has no stored call`);
  return resourceTarget(deps, call.headers, batch.workspace_id, 'batches');
}

function batchEndpointOf(target: ResourceTarget, path: string): string {
  return target.resources.batchEndpoint?.(path) ?? path;
}

/** The input lines' `url` as the provider wants it, when it differs from OpenAI's. */
function lineRewriteOf(target: ResourceTarget, endpoint: string): LineRewrite | undefined {
  if (batchEndpointOf(target, endpoint) === endpoint) return undefined;
  return (text) => {
    try {
      const line = JSON.parse(text) as Json;
      if (typeof line.url === 'string') line.url = batchEndpointOf(target, line.url);
      return JSON.stringify(line);
    } catch {
      return text;
    }
  };
}

/** What a failure to submit the batch leaves in its `errors`. */
function submitErrors(err: unknown): BatchLineError[] {
  if (err instanceof ProviderError || err instanceof GatewayError) {
    return [{ code: err.code ?? 'provider_error', message: err.message, param: err.param, line: null }];
  }
  return [
    {
      code: 'internal_error',
      message: 'The batch could not be sent to the provider',
      param: null,
      line: null,
    },
  ];
}

/** The metadata the provider's batch is created with: the client's, and the gateway's id when there is room. */
function providerMetadata(batch: StoredBatch): Record<string, string> | undefined {
  const own = batch.metadata ?? {};
  if (Object.keys(own).length >= MAX_METADATA_PAIRS || GATEWAY_BATCH_KEY in own) {
    return batch.metadata ?? undefined;
  }
  return { ...own, [GATEWAY_BATCH_KEY]: batch.id };
}

/**
 * The provider's batch that an earlier try of this submission created (it crashed, or lost the answer,
 * before recording it), found by its metadata among the account's batches, down to the first one older
 * than the gateway's batch once the list has shown itself newest first (OpenAI's; Azure's reference does
 * not say its order): a batch older than the one before it shows that order, and no batch newer than the
 * one before it has belied it (list-order.ts). Until then the list is read through, page by page.
 */
async function earlierSubmission(
  deps: GatewayDeps,
  target: ResourceTarget,
  batch: StoredBatch,
): Promise<Json | undefined> {
  const order = new ListOrder();
  for await (const { data } of listPages(deps, target, '/batches', MAX_SEARCH_PAGES)) {
    for (const item of data) {
      const metadata = item.metadata as Record<string, unknown> | null | undefined;
      if (metadata?.[GATEWAY_BATCH_KEY] === batch.id && typeof item.id === 'string') return item;
      const at = item.created_at;
      order.see(at);
      if (order.newestFirst && typeof at === 'number' && at < batch.created_at - CLOCK_SKEW_SECONDS) {
        return undefined;
      }
    }
  }
  return undefined;
}

/** Creates the provider's batch, its input sent first when it is a gateway file (provider-files.ts);
 * `signal` ends a wait for another node's upload of that file, `stop` this node's own upload of it too;
 * `asking` is called as the provider is asked to create the batch (which neither ends). */
async function createAtProvider(
  deps: GatewayDeps,
  target: ResourceTarget,
  batch: StoredBatch,
  signal: AbortSignalLike,
  stop: AbortSignalLike | undefined,
  asking: () => void,
): Promise<Json> {
  const param = 'input_file_id';
  const file = await gatewayFileOf(deps, batch.workspace_id, batch.input_file_id, 'batch', param);
  const files = file ? [{ param, file, rewriteLine: lineRewriteOf(target, batch.endpoint) }] : [];
  const metadata = providerMetadata(batch);
  const { answer } = await createWithCopies(
    deps,
    target,
    'batch',
    files,
    (sent) => {
      asking();
      return callResource(deps, target, {
        method: 'POST',
        path: '/batches',
        ...jsonBody({
          input_file_id: sent[0]?.copy.id ?? batch.input_file_id,
          endpoint: batchEndpointOf(target, batch.endpoint),
          completion_window: '24h',
          ...(metadata && { metadata }),
        }),
      });
    },
    signal,
    stop,
  );
  return answer;
}

/** Why a submission stopped waiting for another node's upload of its input. */
type WaitEnd = 'cancelled' | 'window_ended' | 'closing';

/**
 * Watches the batch's row while its submission may wait for another node's upload of its input (a node
 * renews its claim for as long as its bytes move, so a node stuck at it — a bug, a disk that trickles —
 * would hold the batch `validating` for ever): the wait ends when the batch is cancelled, or once its
 * completion window has ended (`expires_at`, 24 hours after its creation: an upload still under way then
 * could not give a batch that runs in its window), or when this node closes.
 */
function watchSubmission(
  deps: GatewayDeps,
  batchId: string,
  closing: AbortSignalLike | undefined,
): { signal: AbortSignal; ended(): WaitEnd | undefined; stop(): void } {
  const abort = new AbortController();
  let end: WaitEnd | undefined;
  const stop = (why: WaitEnd) => {
    end ??= why;
    abort.abort();
  };
  const onClose = () => stop('closing');
  if (closing?.aborted) onClose();
  else closing?.addEventListener('abort', onClose, { once: true });
  const timer = setInterval(() => {
    deps.store.batches.getById(batchId).then(
      (batch) => {
        if (batch?.status === 'cancelling') stop('cancelled');
        else if (batch?.expires_at != null && Date.now() >= batch.expires_at * 1000) stop('window_ended');
      },
      () => undefined, // the store is read again at the next tick
    );
  }, SUBMISSION_WATCH_MS);
  timer.unref();
  return {
    signal: abort.signal,
    ended: () => end,
    stop() {
      clearInterval(timer);
      closing?.removeEventListener('abort', onClose);
    },
  };
}

/**
 * A submission cut short by its node's stop before the provider was asked to create the batch: the
 * provider holds nothing of it but, perhaps, the input file, whose upload was either remembered
 * (provider-files.ts: the next try uses that copy) or given back (the next try sends it again). The job
 * is handed on as it was, its attempt not counted; the next try need not look for a batch this one made.
 */
export class SubmissionStopped extends Error {
  constructor(batchId: string) {
    super(`The submission of batch ${batchId} was stopped with its gateway node`);
  }
}

/**
 * The submit job: input file to the provider, the provider's batch created (or, when the job is tried
 * again, the one an earlier try created found), the first poll queued. A provider's refusal (4xx) fails
 * the batch with the provider's error, and so does the end of the batch's window while another node
 * still sends its input; a batch cancelled while it waits for that is cancelled; one stopped with its
 * node before the provider was asked for the batch throws `SubmissionStopped`; anything else is retried.
 */
export async function submitProviderBatch(
  deps: GatewayDeps,
  batchId: string,
  triedBefore: boolean,
  /** Aborted when this node stops: a wait for another node's upload of the input ends, and so does this
   * node's own upload of it; the provider's answer to the batch's creation is still waited for. */
  closing?: AbortSignalLike,
): Promise<'poll' | 'done'> {
  const { store } = deps;
  const batch = await store.batches.getById(batchId);
  if (!batch || batch.completion_window !== '24h') return 'done';
  if (await store.providerBatches.get(batchId)) return 'poll';
  if (batch.status === 'cancelling') {
    await store.batches.update(batchId, { status: 'cancelled', cancelled_at: nowSeconds() }, ['cancelling']);
    return 'done';
  }
  if (batch.status !== 'validating') return 'done';
  const watch = watchSubmission(deps, batchId, closing);
  // Once the provider has been asked for the batch, it may have made it: a try after this one looks for it.
  let asked = false;
  try {
    const target = await targetOf(deps, batch);
    const object =
      (triedBefore ? await earlierSubmission(deps, target, batch) : undefined) ??
      (await createAtProvider(deps, target, batch, watch.signal, closing, () => (asked = true)));
    if (typeof object.id !== 'string') {
      throw new GatewayError(
        'upstream_invalid_response',
        `${target.adapter.id} answered the batch without an id`,
      );
    }
    await store.providerBatches.create({
      batch_id: batchId,
      provider: target.adapter.id,
      provider_batch_id: object.id,
      account: target.account,
      object,
    });
    await mirror(store, batchId, object);
    // A cancel that came while the provider was being asked found no batch there to cancel: it is
    // forwarded now. (The cancel looks for the provider's batch after marking the row, this looks at the
    // row after recording the provider's batch, so one of the two always forwards it.)
    if ((await store.batches.getById(batchId))?.status === 'cancelling') {
      await cancelAtProvider(deps, target, batchId, object.id).catch((err: unknown) =>
        deps.logger.warn({ err, batch: batchId }, 'provider batch: the cancel could not be forwarded'),
      );
    }
    return 'poll';
  } catch (err) {
    // The wait for another node's upload ended, and why.
    const ended = err instanceof UploadWaitEnded ? watch.ended() : undefined;
    if (ended === 'cancelled') {
      await store.batches.update(batchId, { status: 'cancelled', cancelled_at: nowSeconds() }, [
        'cancelling',
      ]);
      return 'done';
    }
    if (ended === 'window_ended') {
      const message =
        `The batch's input file ${batch.input_file_id} was still being sent to the provider by another ` +
        "gateway node when the batch's completion window ended (expires_at); the batch was not submitted";
      const errors = [{ code: 'input_file_upload_timeout', message, param: 'input_file_id', line: null }];
      await store.batches.update(batchId, { status: 'failed', failed_at: nowSeconds(), errors }, [
        'validating',
        'cancelling',
      ]);
      return 'done';
    }
    if (closing?.aborted && !asked) throw new SubmissionStopped(batchId);
    // A provider that answered too slowly, or a transfer that stalled, refused nothing: tried again.
    const refused =
      (err instanceof ProviderError && err.status >= 400 && err.status < 500 && err.status !== 429) ||
      (err instanceof GatewayError &&
        err.status >= 400 &&
        err.status < 500 &&
        err.code !== 'request_timeout');
    if (!refused) throw err;
    await store.batches.update(
      batchId,
      { status: 'failed', failed_at: nowSeconds(), errors: submitErrors(err) },
      ['validating', 'cancelling'],
    );
    return 'done';
  } finally {
    watch.stop();
  }
}

function countsOf(object: Json): Pick<BatchPatch, 'total' | 'completed' | 'failed'> {
  const counts = object.request_counts as
    { total?: unknown; completed?: unknown; failed?: unknown } | undefined;
  const num = (value: unknown) => (typeof value === 'number' ? value : 0);
  return counts
    ? { total: num(counts.total), completed: num(counts.completed), failed: num(counts.failed) }
    : {};
}

function errorsOf(object: Json): BatchLineError[] | null {
  const data = (object.errors as { data?: unknown } | null | undefined)?.data;
  if (!Array.isArray(data) || data.length === 0) return null;
  return (data as Json[]).map((item) => ({
    code: typeof item.code === 'string' ? item.code : 'provider_error',
    message: typeof item.message === 'string' ? item.message : '',
    param: typeof item.param === 'string' ? item.param : null,
    line: typeof item.line === 'number' ? item.line : null,
  }));
}

/** The provider's batch object as a patch of the gateway's row (its status only while it runs). */
function patchOf(object: Json): BatchPatch {
  const patch: BatchPatch = { ...countsOf(object) };
  for (const time of BATCH_TIMES) {
    if (typeof object[time] === 'number') patch[time] = object[time];
  }
  const errors = errorsOf(object);
  if (errors) patch.errors = errors;
  if (object.usage && typeof object.usage === 'object') patch.usage = object.usage as BatchUsage;
  if (MIRRORED.includes(object.status as BatchStatus)) patch.status = object.status as BatchStatus;
  return patch;
}

/** The states a running batch takes from the provider's; `cancelling` is the gateway's own. */
const MIRRORED_STATUS: readonly BatchStatus[] = ['validating', 'in_progress', 'finalizing'];

/**
 * Copies the provider's batch object onto the row. A batch cancelled here stays `cancelling` until the
 * provider says how it ended: the status is taken only in an update conditional on the row not being
 * `cancelling`, so a cancel that lands while the provider is being asked is not overwritten.
 */
async function mirror(store: GatewayDeps['store'], batchId: string, object: Json): Promise<void> {
  const patch = patchOf(object);
  if (patch.status !== undefined && (await store.batches.update(batchId, patch, MIRRORED_STATUS))) return;
  const { status: _status, ...rest } = patch;
  await store.batches.update(batchId, rest, MIRRORED);
}

/** Asks the provider to cancel its batch, and mirrors its answer. */
async function cancelAtProvider(
  deps: GatewayDeps,
  target: ResourceTarget,
  batchId: string,
  providerBatchId: string,
): Promise<void> {
  const object = await callResource(deps, target, {
    method: 'POST',
    path: `/batches/${encodeURIComponent(providerBatchId)}/cancel`,
  });
  await deps.store.providerBatches.saw(batchId, object);
  await mirror(deps.store, batchId, object);
}

/** Copies one of the provider's result files into the gateway's file store. */
async function copyFile(
  deps: GatewayDeps,
  target: ResourceTarget,
  batch: StoredBatch,
  providerFileId: string,
  id: string,
  kind: 'output' | 'error',
  stop: AbortSignalLike | undefined,
): Promise<StoredFile> {
  const answer = await openResource(
    deps,
    target,
    { method: 'GET', path: `/files/${encodeURIComponent(providerFileId)}/content`, transfer: true },
    stop,
  );
  try {
    const stored = await deps.blobs.put(fileKey(id), answer.body);
    const created = nowSeconds();
    return {
      id,
      workspace_id: batch.workspace_id,
      purpose: 'batch_output',
      filename: `${batch.id}_${kind}.jsonl`,
      bytes: stored.bytes,
      line_count: null,
      created_at: created,
      expires_at: resultFileExpiry(batch, created),
    };
  } finally {
    answer.done();
  }
}

/** The poll job: mirrors the provider's batch; at its end, copies the files and commits the final state.
 * Resolves with the delay before the next poll, or undefined when the batch has ended. `stop` (this node
 * stops) cuts its calls and copies: run again, it reads and writes the same. */
export async function pollProviderBatch(
  deps: GatewayDeps,
  batchId: string,
  stop?: AbortSignalLike,
): Promise<number | undefined> {
  const { store } = deps;
  const batch = await store.batches.getById(batchId);
  const remote = await store.providerBatches.get(batchId);
  if (!batch || !remote || (ENDED as readonly string[]).includes(batch.status)) return undefined;
  const target = await targetOf(deps, batch).catch(async (err: unknown) => {
    if (await store.getWorkspace(batch.workspace_id)) throw err;
    return undefined;
  });
  if (!target) {
    // Its workspace was deleted, and with it the virtual key or config that reached the provider: the
    // deletion asked the provider to cancel the batch, and nothing more of it can be read there.
    await store.batches.update(batch.id, { status: 'cancelled', cancelled_at: nowSeconds() }, MIRRORED);
    return undefined;
  }
  const object = await callResource(
    deps,
    target,
    { method: 'GET', path: `/batches/${encodeURIComponent(remote.provider_batch_id)}` },
    stop,
  );
  await store.providerBatches.saw(batchId, object);
  const status = object.status as string;
  if (!(ENDED as readonly string[]).includes(status)) {
    await mirror(store, batch.id, object);
    return pollDelayMs(deps.settings, remote.polls);
  }
  const ids = resultFileIds(batch.id);
  const files: StoredFile[] = [];
  if (typeof object.output_file_id === 'string') {
    files.push(await copyFile(deps, target, batch, object.output_file_id, ids.output, 'output', stop));
  }
  if (typeof object.error_file_id === 'string') {
    files.push(await copyFile(deps, target, batch, object.error_file_id, ids.errors, 'error', stop));
  }
  const at = `${status}_at` as (typeof BATCH_TIMES)[number];
  await store.transaction(async (tx: Repositories) => {
    for (const file of files) {
      if (!(await tx.files.get(file.workspace_id, file.id))) await tx.files.create(file);
    }
    await tx.batches.update(batch.id, {
      ...patchOf(object),
      status: status as BatchStatus,
      [at]: typeof object[at] === 'number' ? object[at] : nowSeconds(),
      output_file_id: files.some((f) => f.id === ids.output) ? ids.output : null,
      error_file_id: files.some((f) => f.id === ids.errors) ? ids.errors : null,
    });
  });
  const call = await store.batches.callOf(batch.id);
  if (call) {
    await logProviderBatchLines(
      deps,
      batch,
      call,
      target.adapter.id,
      files.map((file) => file.id),
    ).catch((err: unknown) => deps.logger.warn({ err, batch: batch.id }, 'provider batch lines not logged'));
  }
  return undefined;
}

/** Cancels the batch: at the provider once it has it (its answer mirrored), else before it is sent. */
export async function cancelProviderBatch(deps: GatewayDeps, batch: StoredBatch): Promise<StoredBatch> {
  const { store } = deps;
  if ((ENDED as readonly string[]).includes(batch.status)) {
    throw new GatewayError('conflict', `A batch that is ${batch.status} cannot be cancelled`, {
      param: 'batch_id',
    });
  }
  const remote = await store.providerBatches.get(batch.id);
  if (remote) {
    await cancelAtProvider(deps, await targetOf(deps, batch), batch.id, remote.provider_batch_id);
  }
  const cancelled = await store.batches.update(
    batch.id,
    { status: 'cancelling', cancelling_at: batch.cancelling_at ?? nowSeconds() },
    MIRRORED,
  );
  if (!remote) {
    // Not at the provider when looked for: the submit job, if it was sending it meanwhile, forwards this
    // cancel once it has recorded the provider's batch; if it recorded it already, it is forwarded here.
    const sent = await store.providerBatches.get(batch.id);
    if (sent) {
      await cancelAtProvider(deps, await targetOf(deps, batch), batch.id, sent.provider_batch_id).catch(
        (err: unknown) =>
          deps.logger.warn({ err, batch: batch.id }, 'provider batch: a second cancel failed'),
      );
    }
  }
  return (await store.batches.getById(batch.id)) ?? cancelled ?? batch;
}
