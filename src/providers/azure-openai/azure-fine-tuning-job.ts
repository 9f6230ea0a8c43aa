/**
 * Azure OpenAI's fine-tuning job object → OpenAI's `FineTuningJob`. Azure's API (2024-10-21 and the
 * previews before its v1 API) answers its own shape: `status` from its FineTuningState (`created`,
 * `pending`, `running`, `succeeded`, `cancelled`, `failed`; the older OperationState's `notRunning`), -1 for
 * a hyperparameter left to the service, `organisation_id` and `suffix` under Azure's names, and no
 * `organization_id`, `result_files`, `fine_tuned_model`, `trained_tokens`, `finished_at`, `error` or `seed`
 * until it has a value. A job already in OpenAI's shape (Azure's v1 API) comes out as it went in.
 */
type Json = Record<string, unknown>;

/** Azure's job states by OpenAI's. Not yet started, in whatever words, is `queued`. */
const STATUSES: Record<string, string> = {
  created: 'queued',
  notRunning: 'queued',
  pending: 'queued',
  queued: 'queued',
  validating_files: 'validating_files',
  running: 'running',
  succeeded: 'succeeded',
  failed: 'failed',
  cancelled: 'cancelled',
  canceled: 'cancelled',
  paused: 'paused',
};

const HYPERPARAMETERS = ['n_epochs', 'batch_size', 'learning_rate_multiplier'] as const;

/** -1 (or any value below 1 for the counts, 0 or less for the multiplier) means "the service chooses". */
function hyperparametersOf(value: unknown): unknown {
  if (!value || typeof value !== 'object') return value;
  const out: Json = { ...(value as Json) };
  for (const key of HYPERPARAMETERS) {
    const n = out[key];
    if (typeof n === 'number' && (key === 'learning_rate_multiplier' ? n <= 0 : n < 1)) out[key] = 'auto';
  }
  return out;
}

export function azureFineTuningJob(job: Json): Json {
  const { organisation_id, suffix, ...rest } = job;
  const status = typeof job.status === 'string' ? (STATUSES[job.status] ?? job.status) : job.status;
  return {
    ...rest,
    status,
    hyperparameters: hyperparametersOf(job.hyperparameters) ?? {},
    // Unused on Azure ("compatibility for OpenAI only"), but a string in OpenAI's object.
    organization_id: job.organization_id ?? (typeof organisation_id === 'string' ? organisation_id : ''),
    result_files: job.result_files ?? [],
    fine_tuned_model: job.fine_tuned_model ?? null,
    trained_tokens: job.trained_tokens ?? null,
    finished_at: job.finished_at ?? null,
    validation_file: job.validation_file ?? null,
    error: job.error ?? null,
    // An integer in OpenAI's object, which typed clients decode as one; 0 when Azure does not say it.
    seed: job.seed ?? 0,
    ...(job.user_provided_suffix === undefined && suffix !== undefined && { user_provided_suffix: suffix }),
  };
}
