/** The store's view of files and managed batches (repositories/files.ts, repositories/batches.ts). */

export const FILE_PURPOSES = [
  'assistants',
  'assistants_output',
  'batch',
  'batch_output',
  'fine-tune',
  'fine-tune-results',
  'vision',
  'user_data',
  'evals',
] as const;
export type FilePurpose = (typeof FILE_PURPOSES)[number];

/** The purposes a client may upload a file with, as OpenAI's `POST /files` takes them (`user_data` is the
 * one OpenAI documents for a PDF given to the Responses API as an `input_file`); the others are those of
 * the files the gateway writes itself (a batch's results). */
export const UPLOAD_PURPOSES = [
  'assistants',
  'batch',
  'fine-tune',
  'vision',
  'user_data',
  'evals',
] as const satisfies readonly FilePurpose[];

export interface StoredFile {
  id: string;
  workspace_id: string;
  purpose: FilePurpose;
  filename: string;
  bytes: number;
  /** Lines of a `batch` file (counted at upload), else null. */
  line_count: number | null;
  /** Unix seconds. */
  created_at: number;
  /** Unix seconds from which the file is gone (a batch's result file under `output_expires_after`);
   * null or absent: kept until deleted. */
  expires_at?: number | null;
}

export interface FileListQuery {
  purpose?: string;
  limit: number;
  order: 'asc' | 'desc';
  after?: string;
}

export interface FileRepository {
  create(file: StoredFile): Promise<StoredFile>;
  get(workspaceId: string, id: string): Promise<StoredFile | undefined>;
  list(workspaceId: string, query: FileListQuery): Promise<{ data: StoredFile[]; has_more: boolean }>;
  /** false when there was no such file. */
  delete(workspaceId: string, id: string): Promise<boolean>;
  /** Files whose `expires_at` is at or before `now` (Unix seconds), at most `limit`, of any workspace. */
  expired(now: number, limit: number): Promise<StoredFile[]>;
}

export const BATCH_STATUSES = [
  'validating',
  'failed',
  'in_progress',
  'finalizing',
  'completed',
  'expired',
  'cancelling',
  'cancelled',
] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

export interface BatchLineError {
  code: string;
  message: string;
  param: string | null;
  line: number | null;
}

/** OpenAI's batch usage: the sums over the batch's answered lines. */
export interface BatchUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** The timestamps of a batch's events (Unix seconds), null until the event happens. */
export const BATCH_TIMES = [
  'in_progress_at',
  'expires_at',
  'finalizing_at',
  'completed_at',
  'failed_at',
  'expired_at',
  'cancelling_at',
  'cancelled_at',
] as const;
export type BatchTime = (typeof BATCH_TIMES)[number];

/** What a batch's lines run under: its caller and the request headers that select the provider. */
export interface BatchCall {
  caller: { id: string; organisation_id: string; workspace_id: string };
  /** Lower-case header names: `x-gateway-config`, `x-gateway-provider`, `authorization`, … */
  headers: Record<string, string>;
  metadata: Record<string, string>;
  trace_id: string;
}

export interface StoredBatch extends Record<BatchTime, number | null> {
  id: string;
  workspace_id: string;
  endpoint: string;
  input_file_id: string;
  completion_window: string;
  status: BatchStatus;
  metadata: Record<string, string> | null;
  errors: BatchLineError[] | null;
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: number;
  /** Lines read at validation. */
  total: number;
  /** Settled lines so far: counted as each one settles, and set again from the lines at finalization. */
  completed: number;
  failed: number;
  /** The settled lines' usage so far; the finalized figure once the batch is finished. */
  usage: BatchUsage;
  /** What the settled lines cost, US dollars; null when one of them has no price. */
  cost: number | null;
  /** Lines this batch may run at once on one node; null: the gateway's default. */
  concurrency: number | null;
  finalize_queued: boolean;
  /** Seconds after their creation its output and error files expire; null: they are kept. */
  output_expires_after: number | null;
}

export interface NewBatch {
  workspace_id: string;
  endpoint: string;
  input_file_id: string;
  completion_window: string;
  metadata: Record<string, string> | null;
  concurrency: number | null;
  expires_at: number;
  output_expires_after?: number | null;
  call: BatchCall;
}

export interface NewBatchLine {
  line: number;
  custom_id: string;
  /** The request body as JSON text. */
  body: string;
}

export interface ClaimedLine {
  batch_id: string;
  line: number;
  custom_id: string;
  body: string;
}

export interface SettledLine {
  state: 'succeeded' | 'failed';
  /** The output line, as JSON text. */
  result: string;
  input_tokens: number | null;
  output_tokens: number | null;
  cached_tokens: number | null;
  reasoning_tokens: number | null;
  /** What the line's call cost, US dollars; null when a model it used has no price. */
  cost: number | null;
}

export interface LineCounts {
  total: number;
  succeeded: number;
  failed: number;
  /** Pending or leased. */
  open: number;
}

export type BatchPatch = Partial<
  Pick<
    StoredBatch,
    | BatchTime
    | 'status'
    | 'errors'
    | 'output_file_id'
    | 'error_file_id'
    | 'total'
    | 'completed'
    | 'failed'
    | 'usage'
    | 'finalize_queued'
  >
>;

export interface BatchRepository {
  create(batch: NewBatch): Promise<StoredBatch>;
  get(workspaceId: string, id: string): Promise<StoredBatch | undefined>;
  /** Any workspace's: for the workers. */
  getById(id: string): Promise<StoredBatch | undefined>;
  /** Newest first; `after` is the id the next page starts after. */
  list(
    workspaceId: string,
    query: { limit: number; after?: string },
  ): Promise<{ data: StoredBatch[]; has_more: boolean }>;
  /** Batches in these states (any workspace): what workers look at. */
  withStatus(statuses: readonly BatchStatus[]): Promise<StoredBatch[]>;
  /** The call the batch's lines run under (decrypted). */
  callOf(id: string): Promise<BatchCall | undefined>;
  /** Applies `patch` when the batch is in one of `from` (all states when absent); the batch after, or
   * undefined when it was not in one of them. */
  update(id: string, patch: BatchPatch, from?: readonly BatchStatus[]): Promise<StoredBatch | undefined>;
  /** Sets `patch` and marks the batch's finalization queued, when it is in `from` and not yet marked:
   * true for the one caller that did it. */
  markFinalizeQueued(id: string, from: BatchStatus, patch: BatchPatch): Promise<boolean>;
  /** Adds lines; a line already there is left as it is (validation may run again after a crash). */
  insertLines(batchId: string, lines: readonly NewBatchLine[]): Promise<void>;
  deleteLines(batchId: string): Promise<void>;
  /** Leases up to `limit` due lines of the batch: pending ones, and leased ones whose lease ran out. */
  claimLines(batchId: string, owner: string, leaseMs: number, limit: number): Promise<ClaimedLine[]>;
  /** Extends the leases `owner` holds on these lines of the batch. */
  heartbeatLines(batchId: string, lines: readonly number[], owner: string, leaseMs: number): Promise<void>;
  /** Commits lines' results, in one transaction, for the lines whose lease `owner` still holds, and adds
   * them to the batch's counts and usage; the lines it committed. */
  settleLines(
    batchId: string,
    owner: string,
    results: ReadonlyArray<{ line: number; settled: SettledLine }>,
  ): Promise<Set<number>>;
  /** Gives a leased line back, due again at `notBeforeMs`. */
  releaseLine(batchId: string, line: number, owner: string, notBeforeMs: number): Promise<void>;
  /** Counted from the lines (an index scan): for finalization. */
  lineCounts(batchId: string): Promise<LineCounts>;
  /** Whether a line is still pending or leased (one index probe). */
  hasOpenLines(batchId: string): Promise<boolean>;
  /** Lines leased with a lease that has not run out, on any node. */
  liveLeases(batchId: string): Promise<number>;
  /** Settled lines of one state in input order, `limit` at a time after line `afterLine`. */
  settledLines(
    batchId: string,
    state: 'succeeded' | 'failed',
    afterLine: number,
    limit: number,
  ): Promise<Array<{ line: number; result: string }>>;
  /** Lines still pending or leased, in input order, `limit` at a time after line `afterLine`: the
   * lines a cancelled or expired batch never ran. */
  openLines(
    batchId: string,
    afterLine: number,
    limit: number,
  ): Promise<Array<{ line: number; custom_id: string }>>;
  usageOf(batchId: string): Promise<BatchUsage>;
}
