/** The store's view of work that runs on a provider's own APIs (repositories/provider-jobs.ts). */
import type { BatchCall } from './file-batch-types.js';

/** The states a fine-tuning job ends in (OpenAI's); it leaves none of them. */
export const FINISHED_FINE_TUNING_STATUSES = ['succeeded', 'failed', 'cancelled'] as const;

/** A fine-tuning job: the gateway's id for a job the provider runs. */
export interface StoredFineTuningJob {
  id: string;
  workspace_id: string;
  /** The adapter id, e.g. `openai`, `azure-openai`. */
  provider: string;
  provider_job_id: string;
  /** Which provider account the job lives in (a hash of its address and credentials). */
  account: string;
  status: string;
  /** The provider's job object as last seen. */
  object: Record<string, unknown>;
  /** The gateway file ids the client named, by the provider file id each was sent as. */
  file_ids: Record<string, string>;
  /** The metadata the client gave the job; null for none. */
  metadata: Record<string, string> | null;
  /** Unix seconds. */
  created_at: number;
}

export type NewFineTuningJob = Omit<StoredFineTuningJob, 'id' | 'created_at'> & {
  /** The id the job was given before it was sent to the provider (newFineTuningJobId); absent: a new one. */
  id?: string;
  /** The caller and the headers that chose the provider; encrypted at rest. */
  call: BatchCall;
};

export interface FineTuningJobQuery {
  limit: number;
  after?: string;
  metadata?: Record<string, string> | null;
}

export interface FineTuningJobRepository {
  create(job: NewFineTuningJob): Promise<StoredFineTuningJob>;
  get(workspaceId: string, id: string): Promise<StoredFineTuningJob | undefined>;
  /** Newest first; `after` is the id the next page starts after. `metadata`: only the jobs with each of
   * these pairs; null: only those without metadata. */
  list(
    workspaceId: string,
    query: FineTuningJobQuery,
  ): Promise<{ data: StoredFineTuningJob[]; has_more: boolean }>;
  /** Records the provider's object as last seen; not over a finished one with an unfinished status (an
   * answer to a read made before the job ended, come back after the answer that said it ended). */
  saw(id: string, status: string, object: Record<string, unknown>): Promise<void>;
  /** The call the job was created under (decrypted). */
  callOf(id: string): Promise<BatchCall | undefined>;
}

/** A gateway file's copy in one provider account. */
export type ProviderFileClaim =
  /** Known: the provider's id for it. */
  | { state: 'known'; provider_file_id: string }
  /** This caller claimed the upload and must `remember` (or `release`) it. */
  | { state: 'claimed'; claimed_at_ms: number }
  /** Another caller is uploading it since `claimed_at_ms`. */
  | { state: 'busy'; claimed_at_ms: number };

export interface ProviderFileRepository {
  /** The provider's id for the file in this account; else claims its upload (a claim older than
   * `staleMs` is taken over). */
  claim(fileId: string, account: string, provider: string, staleMs: number): Promise<ProviderFileClaim>;
  /** Renews the claim made at `claimedAtMs` (its upload is still moving), so no other node takes it over
   * as stale: the claim's new `claimed_at_ms`, to complete it by; undefined when it is no longer held. */
  renew(fileId: string, account: string, claimedAtMs: number): Promise<number | undefined>;
  /** Completes the claim made at `claimedAtMs`. */
  remember(fileId: string, account: string, claimedAtMs: number, providerFileId: string): Promise<void>;
  /** Gives up the claim made at `claimedAtMs` (the upload failed). */
  release(fileId: string, account: string, claimedAtMs: number): Promise<void>;
  /** Forgets the copy `providerFileId` (the provider no longer has it), so that the next use sends the
   * file again; a copy remembered since by another use is kept. */
  forget(fileId: string, account: string, providerFileId: string): Promise<void>;
}

/** A gateway batch that runs on the provider's Batch API. */
export interface StoredProviderBatch {
  batch_id: string;
  provider: string;
  provider_batch_id: string;
  account: string;
  /** The provider's batch object as last seen. */
  object: Record<string, unknown>;
  /** How many times it was polled. */
  polls: number;
}

export interface ProviderBatchRepository {
  create(batch: Omit<StoredProviderBatch, 'polls'>): Promise<void>;
  get(batchId: string): Promise<StoredProviderBatch | undefined>;
  saw(batchId: string, object: Record<string, unknown>): Promise<void>;
}
