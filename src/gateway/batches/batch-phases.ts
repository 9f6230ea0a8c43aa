/**
 * The two phases of a batch that run once, as jobs (`store.jobs`, leased, taken over by another node if
 * this one dies): validation of the input file into lines, and finalization of the settled lines into
 * the output and error files. Both may run again after a crash: validation adds only lines not yet
 * there, finalization writes its files under ids derived from the batch's and commits them with the
 * batch's final state in one transaction.
 */
import type { Readable } from 'node:stream';
import type { AbortSignalLike } from '../../core/abort.js';
import type { BlobStore } from '../../store/blob-store.js';
import type {
  BatchLineError,
  BatchStatus,
  NewBatchLine,
  StoredBatch,
  StoredFile,
} from '../../store/file-batch-types.js';
import type { Store } from '../../store/types.js';
import { namesProvider } from '../request-config.js';
import { batchEndpoint } from './batch-endpoints.js';
import { MAX_REPORTED_ERRORS, readBatchInput, type InputLimits } from './batch-input.js';
import { unfinishedLineOf } from './batch-output.js';

export const VALIDATE_JOB = 'batch.validate';
export const FINALIZE_JOB = 'batch.finalize';

export type FinalOutcome = 'completed' | 'cancelled' | 'expired';

export interface ValidatePayload {
  batch_id: string;
  /** Set on a validation queued afresh after the earlier ones failed on their every attempt: when the
   * failures in a row began (ms since the epoch), and how many there were. */
  failing_since_ms?: number;
  earlier_failures?: number;
}

export interface FinalizePayload {
  batch_id: string;
  outcome: FinalOutcome;
}

export function fileKey(fileId: string): string {
  return `files/${fileId}`;
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** Lines inserted per round trip while reading the input. */
const LINE_CHUNK = 500;

/**
 * Reads the batch's input into its lines, and starts it (or fails it with the lines' errors). Resolves
 * `'stopped'` when `stop` (its node stops) ended it part way: the lines stored so far are kept, and the
 * validation run again adds the rest.
 */
export async function validateBatch(
  store: Store,
  blobs: BlobStore,
  batchId: string,
  limits: InputLimits,
  stop?: AbortSignalLike,
): Promise<'stopped' | undefined> {
  const batch = await store.batches.getById(batchId);
  if (!batch || batch.status !== 'validating') return;
  const fail = (errors: BatchLineError[]) =>
    store.transaction(async (tx) => {
      await tx.batches.deleteLines(batchId);
      await tx.batches.update(batchId, { status: 'failed', failed_at: nowSeconds(), errors }, ['validating']);
    });

  const endpoint = batchEndpoint(batch.endpoint);
  const input = await inputOf(store, blobs, batch);
  if (!endpoint || !input) {
    const message = endpoint ? `Input file ${batch.input_file_id} no longer exists` : 'Unknown endpoint';
    await fail([{ code: 'invalid_file', message, param: 'input_file_id', line: null }]);
    return;
  }

  const errors: BatchLineError[] = [];
  let pending: NewBatchLine[] = [];
  let total = 0;
  const call = await store.batches.callOf(batchId);
  const rules = { modelNamesProvider: call !== undefined && !namesProvider(call.headers) };
  for await (const item of readBatchInput(input, batch.endpoint, endpoint, limits, rules)) {
    if ('error' in item) {
      if (errors.length < MAX_REPORTED_ERRORS) errors.push(item.error);
      continue;
    }
    total += 1;
    // Once a line is wrong the batch fails: the rest are only checked.
    if (errors.length > 0) continue;
    pending.push(item.line);
    if (pending.length >= LINE_CHUNK) {
      await store.batches.insertLines(batchId, pending);
      pending = [];
      // Cancelled while validating: stop here, dropping the lines stored so far (none of them will run);
      // the worker finalizes it.
      if ((await store.batches.getById(batchId))?.status !== 'validating') {
        await store.batches.deleteLines(batchId);
        return;
      }
      if (stop?.aborted) return 'stopped';
    }
  }
  if (errors.length > 0) {
    await fail(errors);
    return;
  }
  // The last lines and the batch's start in one transaction: a batch cancelled (and perhaps finalized,
  // its lines deleted) since the last look keeps none of them.
  await store.transaction(async (tx) => {
    await tx.batches.insertLines(batchId, pending);
    const started = await tx.batches.update(
      batchId,
      { status: 'in_progress', in_progress_at: nowSeconds(), total },
      ['validating'],
    );
    if (!started) await tx.batches.deleteLines(batchId);
  });
}

async function inputOf(store: Store, blobs: BlobStore, batch: StoredBatch): Promise<Readable | undefined> {
  const file = await store.files.get(batch.workspace_id, batch.input_file_id);
  return file ? blobs.get(fileKey(file.id)) : undefined;
}

/** Ids of a batch's result files: derived from the batch's, so a finalization run again writes the same. */
export function resultFileIds(batchId: string): { output: string; errors: string } {
  const suffix = batchId.replace(/^batch_/, '');
  return { output: `file_${suffix}_output`, errors: `file_${suffix}_errors` };
}

/** When a result file of the batch made at `created` expires: `output_expires_after` past it, else never. */
export function resultFileExpiry(batch: StoredBatch, created: number): number | null {
  return batch.output_expires_after === null ? null : created + batch.output_expires_after;
}

const PAGE = 1_000;

/** Rows read a page at a time, each page after the last row's line. */
async function* paged<T extends { line: number }>(
  read: (afterLine: number) => Promise<T[]>,
): AsyncGenerator<T> {
  let after = 0;
  for (;;) {
    const page = await read(after);
    if (page.length === 0) return;
    yield* page;
    after = page[page.length - 1].line;
  }
}

/** Output lines (`{line, result}`) as file content: one JSON line each, a page of lines per chunk. Ends
 * with FinalizeStopped at a page once `stop` is aborted. */
async function* jsonl(
  lines: AsyncIterable<{ result: string }>,
  stop: AbortSignalLike | undefined,
): AsyncGenerator<Uint8Array> {
  let chunk: string[] = [];
  for await (const { result } of lines) {
    chunk.push(`${result}\n`);
    if (chunk.length >= PAGE) {
      if (stop?.aborted) throw new FinalizeStopped();
      yield Buffer.from(chunk.join(''));
      chunk = [];
    }
  }
  if (chunk.length > 0) yield Buffer.from(chunk.join(''));
}

class FinalizeStopped extends Error {
  constructor() {
    super("The batch's finalization was stopped by its node's stop");
  }
}

/** The settled lines of one state, in input order. */
function settled(store: Store, batchId: string, state: 'succeeded' | 'failed') {
  return paged((after) => store.batches.settledLines(batchId, state, after, PAGE));
}

/**
 * The error file's lines, in input order: the failed lines, and with them, for a batch that ended
 * expired or cancelled, the lines it never ran (`batch_expired` / `batch_cancelled`, as OpenAI writes
 * them).
 */
async function* errorLines(
  store: Store,
  batchId: string,
  unfinished: 'expired' | 'cancelled' | null,
): AsyncGenerator<{ line: number; result: string }> {
  const failed = settled(store, batchId, 'failed');
  const open = paged(async (after) => {
    if (!unfinished) return [];
    const rows = await store.batches.openLines(batchId, after, PAGE);
    return rows.map(({ line, custom_id }) => ({
      line,
      result: unfinishedLineOf(batchId, line, custom_id, unfinished),
    }));
  });
  let a = await failed.next();
  let b = await open.next();
  for (;;) {
    if (!a.done && (b.done || a.value.line < b.value.line)) {
      yield a.value;
      a = await failed.next();
    } else if (!b.done) {
      yield b.value;
      b = await open.next();
    } else return;
  }
}

const FINAL_STATUS: Record<
  FinalOutcome,
  { status: BatchStatus; at: 'completed_at' | 'cancelled_at' | 'expired_at' }
> = {
  completed: { status: 'completed', at: 'completed_at' },
  cancelled: { status: 'cancelled', at: 'cancelled_at' },
  expired: { status: 'expired', at: 'expired_at' },
};

const TERMINAL: readonly BatchStatus[] = ['completed', 'failed', 'cancelled', 'expired'];

/**
 * Writes the batch's output and error files and ends it. Resolves `'stopped'` when `stop` (its node's stop)
 * ended it before the files were committed: nothing of it is committed, and the finalization run again
 * writes the same files under the same ids (a file already written is replaced whole).
 */
export async function finalizeBatch(
  store: Store,
  blobs: BlobStore,
  payload: FinalizePayload,
  stop?: AbortSignalLike,
): Promise<'stopped' | undefined> {
  try {
    await writeFinal(store, blobs, payload, stop);
  } catch (error) {
    if (stop?.aborted) return 'stopped';
    throw error;
  }
}

async function writeFinal(
  store: Store,
  blobs: BlobStore,
  payload: FinalizePayload,
  stop: AbortSignalLike | undefined,
): Promise<void> {
  const batch = await store.batches.getById(payload.batch_id);
  if (!batch || TERMINAL.includes(batch.status)) return;
  const counts = await store.batches.lineCounts(batch.id);
  // A batch cancelled while validating never ran a line: it reports 0 requests, as OpenAI's does, not
  // however many lines its validation had stored when it stopped.
  const total = batch.in_progress_at === null ? 0 : counts.total;
  // The lines an expired or cancelled batch never ran are failed requests of its error file, as OpenAI
  // counts and writes them; none are left once a batch completes.
  const unfinished = payload.outcome === 'completed' || total === 0 ? null : payload.outcome;
  const failed = counts.failed + (unfinished ? counts.open : 0);
  const usage = await store.batches.usageOf(batch.id);
  const ids = resultFileIds(batch.id);
  const created = nowSeconds();
  const files: StoredFile[] = [];
  for (const [kind, id, count, lines] of [
    ['output', ids.output, counts.succeeded, () => settled(store, batch.id, 'succeeded')],
    ['error', ids.errors, failed, () => errorLines(store, batch.id, unfinished)],
  ] as const) {
    if (count === 0) continue;
    const stored = await blobs.put(fileKey(id), jsonl(lines(), stop), stop);
    files.push({
      id,
      workspace_id: batch.workspace_id,
      purpose: 'batch_output' as const,
      filename: `${batch.id}_${kind}.jsonl`,
      bytes: stored.bytes,
      line_count: count,
      created_at: created,
      expires_at: resultFileExpiry(batch, created),
    });
  }
  // Stopped once the files are written, the commit is still made: it is one short transaction.
  const final = FINAL_STATUS[payload.outcome];
  await store.transaction(async (tx) => {
    for (const file of files) await tx.files.create(file);
    await tx.batches.update(batch.id, {
      status: final.status,
      [final.at]: created,
      output_file_id: counts.succeeded > 0 ? ids.output : null,
      error_file_id: failed > 0 ? ids.errors : null,
      total,
      completed: counts.succeeded,
      failed,
      usage,
    });
    await tx.batches.deleteLines(batch.id);
  });
}
