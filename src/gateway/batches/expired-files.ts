/**
 * Files past their `expires_at` (an upload's `expires_after`, a batch's results under its
 * `output_expires_after`) are gone to the API at once (the store's reads pass over them); this sweep
 * deletes their contents and records, a bounded number per run. A file swept by two nodes at once is
 * simply not found by the second.
 */
import type { BlobStore } from '../../store/blob-store.js';
import type { Store } from '../../store/types.js';
import { fileKey } from './batch-phases.js';

/** Files deleted per sweep; the next sweep goes on where it stopped. */
const SWEEP_LIMIT = 100;

export async function sweepExpiredFiles(store: Store, blobs: BlobStore, nowMs: number): Promise<number> {
  const files = await store.files.expired(Math.floor(nowMs / 1000), SWEEP_LIMIT);
  for (const file of files) {
    // The contents first: a record left behind is swept next time, contents left behind never would be.
    await blobs.delete(fileKey(file.id));
    await store.files.delete(file.workspace_id, file.id);
  }
  return files.length;
}
