// Azure OpenAI's fine-tuning job objects in its own shape (API version 2024-10-21): the documented
// samples of its REST reference, and the fake's OpenAI-shaped jobs rendered the same way.

type Json = Record<string, unknown>;

/** The documented answers of FineTuning_Create, FineTuning_Get and FineTuning_Cancel (2024-10-21). */
export const azureDocumentedJobs = {
  created: {
    hyperparameters: { n_epochs: -1 },
    status: 'pending',
    model: 'curie',
    training_file: 'file-181a1cbdcdcf4677ada87f63a0928099',
    id: 'ft-72a2792ef7d24ba7b82c7fe4a37e379f',
    created_at: 1646126127,
    object: 'fine_tuning.job',
  },
  succeeded: {
    hyperparameters: { n_epochs: -1 },
    status: 'succeeded',
    model: 'curie',
    fine_tuned_model: 'curie.ft-72a2792ef7d24ba7b82c7fe4a37e379f',
    training_file: 'file-181a1cbdcdcf4677ada87f63a0928099',
    result_files: ['file-181a1cbdcdcf4677ada87f63a0928099'],
    finished_at: 1646127311,
    trained_tokens: 2342,
    id: 'ft-72a2792ef7d24ba7b82c7fe4a37e379f',
    created_at: 1646126127,
    object: 'fine_tuning.job',
  },
  cancelled: {
    hyperparameters: { n_epochs: -1 },
    status: 'cancelled',
    model: 'curie',
    training_file: 'file-181a1cbdcdcf4677ada87f63a0928099',
    finished_at: 1646127311,
    id: 'ft-72a2792ef7d24ba7b82c7fe4a37e379f',
    created_at: 1646126127,
    object: 'fine_tuning.job',
  },
} satisfies Record<string, Json>;

const AZURE_STATES: Record<string, string> = { validating_files: 'pending', queued: 'pending' };

/** An OpenAI-shaped job of the fake as Azure sends it: its states, -1 for "auto", Azure's field names,
 * and the fields without a value left out. */
export function azureJobWire(job: Json): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(job)) {
    if (value === null || (Array.isArray(value) && value.length === 0)) continue;
    if (['organization_id', 'method', 'metadata', 'integrations', 'estimated_finish'].includes(key)) continue;
    out[key === 'user_provided_suffix' ? 'suffix' : key] = value;
  }
  out.status = AZURE_STATES[job.status as string] ?? job.status;
  out.hyperparameters = Object.fromEntries(
    Object.entries((job.hyperparameters ?? {}) as Json).map(([k, v]) => [k, v === 'auto' ? -1 : v]),
  );
  return out;
}
