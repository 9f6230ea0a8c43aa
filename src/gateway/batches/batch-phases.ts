/**
 * The two phases of a batch that run once, as jobs (`store.jobs`, leased, taken over by another node if
 * this one dies): validation of the input file into lines, and finalization of the settled lines into
 * the output and error files. Both may run again after a crash: validation adds only lines not yet
 * there, finalization writes its files under ids derived from the batch's and commits them with the
 * batch's final state in one transaction.
 */
import type { Readable } from 'node:stream';
import type { BlobStore } from '../../store/blob-store.js';
import type {
  BatchLineError,
  BatchStatus,
  NewBatchLine,
  StoredBatch,
  StoredFile,
} from '../../store/file-batch-types.js';
import type { Store } from '../../store/types.js';
import { batchEndpoint } from './batch-endpoints.js';
import { MAX_REPORTED_ERRORS, readBatchInput } from './batch-input.js';

export const VALIDATE_JOB = 'batch.validate';
export const FINALIZE_JOB = 'batch.finalize';

export type FinalOutcome = 'completed' | 'cancelled' | 'expired';

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

export async function validateBatch(
  store: Store,
  blobs: BlobStore,
  batchId: string,
  maxLines: number,
): Promise<void> {
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
  for await (const item of readBatchInput(input, batch.endpoint, endpoint, { maxLines })) {
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
    }
  }
  if (errors.length > 0) {
    await fail(errors);
    return;
  }
  await store.batches.insertLines(batchId, pending);
  await store.batches.update(batchId, { status: 'in_progress', in_progress_at: nowSeconds(), total }, [
    'validating',
  ]);
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

const PAGE = 1_000;

/** The settled lines of one state, in input order, one JSON line each. */
async function* resultLines(
  store: Store,
  batchId: string,
  state: 'succeeded' | 'failed',
): AsyncGenerator<Uint8Array> {
  let after = 0;
  for (;;) {
    const page = await store.batches.settledLines(batchId, state, after, PAGE);
    if (page.length === 0) return;
    yield Buffer.from(page.map((row) => `${row.result}\n`).join(''));
    after = page[page.length - 1].line;
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

export async function finalizeBatch(store: Store, blobs: BlobStore, payload: FinalizePayload): Promise<void> {
  const batch = await store.batches.getById(payload.batch_id);
  if (!batch || TERMINAL.includes(batch.status)) return;
  const counts = await store.batches.lineCounts(batch.id);
  // A batch cancelled while validating never ran a line: it reports 0 requests, as OpenAI's does, not
  // however many lines its validation had stored when it stopped.
  const total = batch.in_progress_at === null ? 0 : counts.total;
  const usage = await store.batches.usageOf(batch.id);
  const ids = resultFileIds(batch.id);
  const created = nowSeconds();
  const files: StoredFile[] = [];
  for (const [state, id, count] of [
    ['succeeded', ids.output, counts.succeeded],
    ['failed', ids.errors, counts.failed],
  ] as const) {
    if (count === 0) continue;
    const stored = await blobs.put(fileKey(id), resultLines(store, batch.id, state));
    files.push({
      id,
      workspace_id: batch.workspace_id,
      purpose: 'batch_output' as const,
      filename: `${batch.id}_${state === 'succeeded' ? 'output' : 'error'}.jsonl`,
      bytes: stored.bytes,
      line_count: count,
      created_at: created,
    });
  }
  const final = FINAL_STATUS[payload.outcome];
  await store.transaction(async (tx) => {
    for (const file of files) await tx.files.create(file);
    await tx.batches.update(batch.id, {
      status: final.status,
      [final.at]: created,
      output_file_id: counts.succeeded > 0 ? ids.output : null,
      error_file_id: counts.failed > 0 ? ids.errors : null,
      total,
      completed: counts.succeeded,
      failed: counts.failed,
      usage,
    });
    await tx.batches.deleteLines(batch.id);
  });
}
