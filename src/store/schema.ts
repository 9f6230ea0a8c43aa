/**
 * Row types as the database holds them, for Kysely. Both dialects store the same things the same
 * way: booleans as 0/1 integers, JSON as text, times as integer seconds (milliseconds for logs).
 * pg hands bigint back as a string unless told otherwise, hence `number | string` where it matters.
 */
export type Int8 = number | string;

export interface OrganisationsTable {
  id: string;
  name: string;
  created_at: Int8;
}

export interface WorkspacesTable {
  id: string;
  organisation_id: string;
  slug: string;
  name: string;
  created_at: Int8;
  /** Unix seconds; null while the workspace is live. */
  deleted_at: Int8 | null;
}

export interface ApiKeysTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  name: string;
  role: string;
  key_hash: string;
  key_prefix: string;
  status: string;
  created_at: Int8;
  updated_at: Int8;
  expires_at: Int8 | null;
  last_used_at: Int8 | null;
  metadata: string;
}

export interface CredentialsTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  kind: string;
  slug: string;
  name: string;
  provider: string;
  secret_encrypted: string;
  status: string;
  created_at: Int8;
  updated_at: Int8;
  deleted_at: Int8 | null;
}

export interface ConfigsTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  slug: string;
  name: string;
  config: string;
  version: number;
  status: string;
  created_at: Int8;
  updated_at: Int8;
  deleted_at: Int8 | null;
}

export interface ConfigVersionsTable {
  config_id: string;
  version: number;
  config: string;
  created_at: Int8;
  /** 1 once the documents the version names are in config_version_references (0026). */
  references_indexed: number;
}

/** A stored document a config version names, as `kind:name` (0026_document_references). */
export interface ConfigVersionReferencesTable {
  config_id: string;
  version: number;
  workspace_id: string;
  name: string;
}

export interface GuardrailsTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  slug: string;
  name: string;
  guardrail: string;
  version: number;
  created_at: Int8;
  updated_at: Int8;
  deleted_at: Int8 | null;
}

export interface GuardrailVersionsTable {
  guardrail_id: string;
  version: number;
  guardrail: string;
  created_at: Int8;
  /** 1 once the documents the version names are in guardrail_version_references (0028). */
  references_indexed: number;
}

/** A stored document a guardrail version names, as `kind:name` (0028_guardrail_version_references). */
export interface GuardrailVersionReferencesTable {
  guardrail_id: string;
  version: number;
  workspace_id: string;
  name: string;
}

/** A prompt and its versions (0005_prompts): `prompt` holds the version's document, encrypted like a
 * config (an inline config may carry credentials). */
export interface PromptsTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  slug: string;
  name: string;
  prompt: string;
  version: number;
  published_version: number;
  created_at: Int8;
  updated_at: Int8;
  deleted_at: Int8 | null;
}

export interface PromptVersionsTable {
  prompt_id: string;
  version: number;
  prompt: string;
  created_at: Int8;
  /** 1 once the partials the version includes are in prompt_version_includes (0025). */
  includes_indexed: number;
  /** 1 once the documents the version names are in prompt_version_references (0026). */
  references_indexed: number;
}

/** A stored document a prompt version names, as `kind:name` (0026_document_references). */
export interface PromptVersionReferencesTable {
  prompt_id: string;
  version: number;
  workspace_id: string;
  name: string;
}

/** A partial a prompt version includes, by the name its text uses (0025_prompt_partial_includes). */
export interface PromptVersionIncludesTable {
  prompt_id: string;
  version: number;
  workspace_id: string;
  partial: string;
}

export interface PromptPartialsTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  slug: string;
  name: string;
  partial: string;
  version: number;
  published_version: number;
  created_at: Int8;
  updated_at: Int8;
  deleted_at: Int8 | null;
}

export interface PromptPartialVersionsTable {
  partial_id: string;
  version: number;
  partial: string;
  created_at: Int8;
  /** 1 once the partials the version includes are in prompt_partial_version_includes (0025). */
  includes_indexed: number;
}

/** A partial a partial's version includes, by the name its text uses (0025_prompt_partial_includes). */
export interface PromptPartialVersionIncludesTable {
  partial_id: string;
  version: number;
  workspace_id: string;
  partial: string;
}

export interface RateLimitPoliciesTable {
  id: string;
  organisation_id: string;
  workspace_id: string;
  name: string;
  type: string;
  unit: string;
  value: number | string;
  status: string;
  /** JSON text (0006_rate_limit_policies). */
  conditions: string;
  group_by: string;
  created_at: Int8;
  updated_at: Int8;
}

export interface LogsTable {
  id: string;
  created_at_ms: Int8;
  organisation_id: string | null;
  workspace_id: string | null;
  api_key_id: string | null;
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  span_name: string | null;
  method: string;
  path: string;
  endpoint: string;
  provider: string | null;
  model: string | null;
  target: string | null;
  status: number;
  is_attempt: number;
  stream: number;
  latency_ms: number;
  ttfb_ms: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  cached_tokens: number | null;
  reasoning_tokens: number | null;
  /** Dollars (0011_log_cost). */
  cost: number | null;
  cache_status: string | null;
  /** The similarity of a semantic cache answer (0010_semantic_cache). */
  cache_similarity: number | string | null;
  retry_count: number;
  error_code: string | null;
  error_message: string | null;
  metadata: string;
  request_body: string | null;
  response_body: string | null;
  /** JSON text (0003_log_hook_results). */
  hook_results: string | null;
  /** The stored prompt a prompt completion ran, and its version (0005_prompts). */
  prompt_id: string | null;
  prompt_version: number | null;
}

/** The semantic cache's entries (0010_semantic_cache). */
export interface SemanticCacheEntriesTable {
  id: string;
  workspace_id: string;
  namespace: string;
  partition_key: string;
  exact_key: string;
  /** float32 little-endian, base64. */
  vector: string;
  answer: string;
  created_at_ms: Int8;
  expires_at_ms: Int8;
}

export interface JobsTable {
  id: string;
  kind: string;
  status: string;
  workspace_id: string | null;
  payload: string;
  result: string | null;
  error: string | null;
  attempts: number;
  max_attempts: number;
  run_at_ms: Int8;
  lease_owner: string | null;
  lease_expires_at_ms: Int8 | null;
  created_at_ms: Int8;
  updated_at_ms: Int8;
  finished_at_ms: Int8 | null;
}

/** Analytics rollups of the log (0013_log_rollups, store/rollups.ts); '' stands for "none" in key columns. */
export interface LogRollupsTable {
  workspace_id: string;
  period: string;
  bucket_ms: number;
  provider: string;
  model: string;
  api_key_id: string;
  prompt_id: string;
  status_class: number;
  meta_key: string;
  meta_value: string;
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost: number;
  /** Requests whose cost is known (the others add nothing to `cost`). */
  priced: number;
  latency_ms_sum: number;
  /** Requests per latency bucket (rollups.ts LATENCY_BOUNDS_MS). */
  h00: number;
  h01: number;
  h02: number;
  h03: number;
  h04: number;
  h05: number;
  h06: number;
  h07: number;
  h08: number;
  h09: number;
  h10: number;
  h11: number;
  h12: number;
  h13: number;
  h14: number;
  h15: number;
  h16: number;
  h17: number;
  h18: number;
  h19: number;
  h20: number;
  h21: number;
  h22: number;
  h23: number;
  h24: number;
}

/** Stored responses of the Responses API (0008_responses); `body` is the Response object as JSON text. */
export interface ResponsesTable {
  id: string;
  workspace_id: string;
  previous_response_id: string | null;
  status: string;
  body: string;
  created_at_ms: Int8;
  updated_at_ms: Int8;
}

export interface ResponseInputItemsTable {
  response_id: string;
  position: number;
  id: string;
  /** The item as JSON text. */
  item: string;
}

/** The call a background response runs (0021_response_background): `call_encrypted` holds its caller
 * and provider headers, `request` the request the pipeline carries (JSON text). */
export interface ResponseRunsTable {
  response_id: string;
  call_encrypted: string;
  request: string;
}

/** The events of a streamed background response, by `sequence_number`; `event` is its JSON text. */
export interface ResponseEventsTable {
  response_id: string;
  sequence_number: number;
  event: string;
}

export interface FilesTable {
  id: string;
  workspace_id: string;
  purpose: string;
  filename: string;
  bytes: Int8;
  line_count: number | null;
  created_at: Int8;
  expires_at: Int8 | null;
}

export interface BatchesTable {
  id: string;
  workspace_id: string;
  endpoint: string;
  input_file_id: string;
  completion_window: string;
  status: string;
  metadata: string | null;
  errors: string | null;
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: Int8;
  in_progress_at: Int8 | null;
  expires_at: Int8 | null;
  finalizing_at: Int8 | null;
  completed_at: Int8 | null;
  failed_at: Int8 | null;
  expired_at: Int8 | null;
  cancelling_at: Int8 | null;
  cancelled_at: Int8 | null;
  total: number;
  completed: number;
  failed: number;
  usage: string | null;
  /** Running sums of the settled lines' usage (the finalized `usage` replaces them). */
  input_tokens: Int8;
  output_tokens: Int8;
  cached_tokens: Int8;
  reasoning_tokens: Int8;
  /** What the settled lines cost, in US dollars, over those with a price; `unpriced`: the others. */
  cost: number;
  unpriced: Int8;
  concurrency: number | null;
  call_encrypted: string;
  finalize_queued: number;
  output_expires_after: Int8 | null;
}

export interface BatchLinesTable {
  batch_id: string;
  line: number;
  custom_id: string;
  body: string;
  state: string;
  not_before_ms: Int8;
  lease_owner: string | null;
  lease_expires_at_ms: Int8 | null;
  result: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cached_tokens: number | null;
  reasoning_tokens: number | null;
  /** The line's call's cost, US dollars; null when a model it used has no price. */
  cost: number | null;
}

export interface FineTuningJobsTable {
  id: string;
  workspace_id: string;
  provider: string;
  provider_job_id: string;
  account: string;
  status: string;
  object: string;
  file_ids: string;
  call_encrypted: string;
  /** The client's metadata (JSON text); null for none (0020_fine_tuning_job_metadata). */
  metadata: string | null;
  created_at: Int8;
  updated_at_ms: Int8;
}

export interface ProviderFilesTable {
  file_id: string;
  account: string;
  provider: string;
  provider_file_id: string | null;
  claimed_at_ms: Int8;
}

export interface ProviderBatchesTable {
  batch_id: string;
  provider: string;
  provider_batch_id: string;
  account: string;
  object: string;
  polls: number;
  updated_at_ms: Int8;
}

export interface Database {
  organisations: OrganisationsTable;
  workspaces: WorkspacesTable;
  api_keys: ApiKeysTable;
  credentials: CredentialsTable;
  configs: ConfigsTable;
  config_versions: ConfigVersionsTable;
  config_version_references: ConfigVersionReferencesTable;
  guardrails: GuardrailsTable;
  guardrail_versions: GuardrailVersionsTable;
  guardrail_version_references: GuardrailVersionReferencesTable;
  prompts: PromptsTable;
  prompt_versions: PromptVersionsTable;
  prompt_partials: PromptPartialsTable;
  prompt_partial_versions: PromptPartialVersionsTable;
  prompt_version_includes: PromptVersionIncludesTable;
  prompt_version_references: PromptVersionReferencesTable;
  prompt_partial_version_includes: PromptPartialVersionIncludesTable;
  rate_limit_policies: RateLimitPoliciesTable;
  logs: LogsTable;
  log_rollups: LogRollupsTable;
  jobs: JobsTable;
  responses: ResponsesTable;
  response_input_items: ResponseInputItemsTable;
  response_runs: ResponseRunsTable;
  response_events: ResponseEventsTable;
  semantic_cache_entries: SemanticCacheEntriesTable;
  files: FilesTable;
  batches: BatchesTable;
  batch_lines: BatchLinesTable;
  fine_tuning_jobs: FineTuningJobsTable;
  provider_files: ProviderFilesTable;
  provider_batches: ProviderBatchesTable;
}
