/**
 * The durable store: one interface, two implementations (SQLite file by default, PostgreSQL when
 * DATABASE_URL is set). Everything here is plain data; secrets are handed in and out decrypted and
 * are encrypted at rest by the implementation (AES-256-GCM under the master key).
 *
 * Timestamps are Unix seconds, except log records which carry milliseconds where noted.
 *
 * Errors (GatewayError): a duplicate slug is `conflict`; creating a key, credential, config or guardrail
 * in a workspace that is not of the given organisation is `not_found`; a stored secret that cannot be
 * decrypted (wrong master key) is `internal_error`. Missing rows are `undefined` / `false`, not errors.
 * Deleted credentials, configs and guardrails are hidden from every read and free their slug.
 */
import type { AbortSignalLike } from '../core/abort.js';
import type { BatchCall, BatchRepository, FileRepository } from './file-batch-types.js';
import type {
  FineTuningJobRepository,
  ProviderBatchRepository,
  ProviderFileRepository,
} from './provider-job-types.js';

export type Role = 'admin' | 'member';

export interface Organisation {
  id: string;
  name: string;
  created_at: number;
}

export interface Workspace {
  id: string;
  organisation_id: string;
  slug: string;
  name: string;
  created_at: number;
}

export interface ApiKey {
  id: string;
  organisation_id: string;
  workspace_id: string;
  name: string;
  role: Role;
  /** First characters of the key, shown in listings so people can tell keys apart. */
  key_prefix: string;
  status: 'active' | 'revoked';
  created_at: number;
  updated_at: number;
  expires_at: number | null;
  last_used_at: number | null;
  metadata: Record<string, string>;
}

/** Provider credentials and settings kept in the store: the keys of the config object that say how to
 * reach a provider (api_key, custom_host and the vendora_/cloudb_/cloudc_/cloudd_ keys, deployments…). */
export type ProviderSecret = Record<string, unknown>;

/**
 * Stored provider credentials, addressed by slug. `kind` tells the two ways of addressing them apart:
 * a virtual key (`x-gateway-virtual-key: <slug>`, config `virtual_key`) or a model-catalog provider
 * (`x-gateway-provider: @<slug>`, config `provider: "@<slug>"`).
 */
export interface ProviderCredential {
  id: string;
  organisation_id: string;
  workspace_id: string;
  kind: 'virtual_key' | 'provider';
  slug: string;
  name: string;
  provider: string;
  /** Decrypted; never sent back by the management API (see `redactSecret`). */
  secret: ProviderSecret;
  status: 'active' | 'revoked';
  created_at: number;
  updated_at: number;
}

export interface StoredConfig {
  id: string;
  organisation_id: string;
  workspace_id: string;
  /** Stable, human-chosen id (e.g. `pc-prod-fallback`); `x-gateway-config: <slug>` resolves it. */
  slug: string;
  name: string;
  /** The current (latest) version's config object. */
  config: Record<string, unknown>;
  version: number;
  status: 'active' | 'archived';
  created_at: number;
  updated_at: number;
}

export interface StoredConfigVersion {
  config_id: string;
  version: number;
  config: Record<string, unknown>;
  created_at: number;
}

/**
 * A guardrail kept in the store, addressed by slug: a config's `input_guardrails` /
 * `output_guardrails` item `"<slug>"` stands for it. `guardrail` is the hook definition in the form an
 * inline guardrail item takes (`{id?, deny?, async?, on_fail?, on_success?, "default.<check>": {…}}`),
 * validated by the management API before it is stored.
 */
export interface StoredGuardrail {
  id: string;
  organisation_id: string;
  workspace_id: string;
  slug: string;
  name: string;
  /** The current (latest) version's definition. */
  guardrail: Record<string, unknown>;
  version: number;
  created_at: number;
  updated_at: number;
}

export interface StoredGuardrailVersion {
  guardrail_id: string;
  version: number;
  guardrail: Record<string, unknown>;
  created_at: number;
}

/**
 * One version of a stored prompt: the template, the model parameters, and where to send it. Checked by
 * the management API before it is stored (the template parses, its variables sit inside JSON strings, its
 * partials exist, it renders to valid messages).
 */
export interface PromptDocument {
  /** `chat`: `string` is a JSON `messages` array written as Mustache text; `completion`: a text prompt. */
  template_type: 'chat' | 'completion';
  /** The Mustache template. */
  string: string;
  /** Body fields of the request (model, temperature, max_tokens, tools, response_format …). */
  parameters: Record<string, unknown>;
  /** Where the call goes, at most one of: a virtual key's slug, a provider (`@slug` or a name), or a
   * config (a stored config's id or slug, or an inline config object). None: the request's headers say. */
  virtual_key?: string;
  provider?: string;
  config?: string | Record<string, unknown>;
}

/** A prompt kept in the store, addressed by slug or id, with immutable numbered versions. */
export interface StoredPrompt {
  id: string;
  organisation_id: string;
  workspace_id: string;
  slug: string;
  name: string;
  /** The latest version's document. */
  prompt: PromptDocument;
  /** The latest version. */
  version: number;
  /** The version a call without `@…` runs. */
  published_version: number;
  created_at: number;
  updated_at: number;
}

export type RateLimitType = 'requests' | 'tokens';
export type RateLimitUnit = 'rpm' | 'rph' | 'rpd';

/**
 * Which calls a rate-limit policy applies to: the call's value of `key` (`api_key`, `model`,
 * `metadata.user`…) is `value`, one of `value` (an array), or anything (`*`), and none of `excludes`.
 * Values name things by id or slug, never by secret. The keys and their meaning: docs/rate-limits.md.
 */
export interface RateLimitCondition {
  key: string;
  value: string | string[];
  excludes?: string | string[];
}

/** A user-defined limit on requests or tokens per minute, hour or day (docs/rate-limits.md). */
export interface RateLimitPolicy {
  /** A UUID. */
  id: string;
  organisation_id: string;
  workspace_id: string;
  name: string;
  type: RateLimitType;
  unit: RateLimitUnit;
  value: number;
  status: 'active' | 'archived';
  /** All must hold (AND). */
  conditions: RateLimitCondition[];
  /** Each distinct combination of these keys' values has a counter of its own. */
  group_by: Array<{ key: string }>;
  created_at: number;
  updated_at: number;
}

export interface StoredPromptVersion {
  prompt_id: string;
  version: number;
  prompt: PromptDocument;
  created_at: number;
}

/** A partial (`{{>slug}}` in a template), versioned and published like a prompt. */
export interface PromptPartialDocument {
  string: string;
}

export interface StoredPromptPartial {
  id: string;
  organisation_id: string;
  workspace_id: string;
  slug: string;
  name: string;
  partial: PromptPartialDocument;
  version: number;
  published_version: number;
  created_at: number;
  updated_at: number;
}

export interface StoredPromptPartialVersion {
  partial_id: string;
  version: number;
  partial: PromptPartialDocument;
  created_at: number;
}

export interface RateLimitPolicyQuery {
  workspace_id: string;
  status?: RateLimitPolicy['status'];
  type?: RateLimitType;
  unit?: RateLimitUnit;
  /** Page size; all when absent. */
  limit?: number;
  offset?: number;
}

export interface LogRecord {
  id: string;
  /** Milliseconds since the epoch. */
  created_at_ms: number;
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
  /** JSON path of the target that handled the call, e.g. `targets[1]`. */
  target: string | null;
  status: number;
  /** true for a record of one attempt inside a request, false for the request itself. */
  is_attempt: boolean;
  stream: boolean;
  latency_ms: number;
  ttfb_ms: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  cached_tokens: number | null;
  reasoning_tokens: number | null;
  /** What the call cost in US dollars (docs/cost.md); null when a model it used has no price. */
  cost: number | null;
  cache_status: string | null;
  /** How close the request was to the semantic cache entry that answered it (1 for an exact match). */
  cache_similarity: number | null;
  retry_count: number;
  error_code: string | null;
  error_message: string | null;
  metadata: Record<string, string>;
  /** Redacted request and response bodies, when body logging is on. */
  request_body: unknown;
  response_body: unknown;
  /** The hooks' results and feedback (`{before_request_hooks, after_request_hooks}`), when the config had
   * hooks; null otherwise and on attempt records. */
  hook_results: unknown;
  /** The stored prompt a prompt completion ran (its id) and the version it ran; null for other calls. */
  prompt_id: string | null;
  prompt_version: number | null;
}

export interface LogQuery {
  workspace_id: string;
  trace_id?: string;
  provider?: string;
  model?: string;
  status?: number;
  api_key_id?: string;
  /** Milliseconds, both bounds inclusive. */
  from_ms?: number;
  to_ms?: number;
  /** Metadata key/value equality filters. */
  metadata?: Record<string, string>;
  /** Text found, in any case, inside a metadata key or value. */
  search?: string;
  /** Clamped to 1..1000. */
  limit: number;
  /** Id of the last record of the previous page (records come newest first, ties by id). An id that
   * is not a log of this workspace is refused with `invalid_query`. */
  after?: string;
}

export interface Page<T> {
  data: T[];
  has_more: boolean;
}

/**
 * A unit of background work. `queued` jobs are claimed once due (`run_at_ms`); a claim leases the job
 * to one owner until `lease_expires_at_ms`, and a `running` job whose lease expired is claimable again
 * (its node is presumed dead). Each claim counts an attempt; `fail` puts the job back in the queue
 * until `max_attempts` is used up, then it is `failed`; `release` puts it back and gives the attempt back
 * (its node stopped cleanly while running it).
 */
export type JobStatus = 'queued' | 'running' | 'completed' | 'failed';

export interface Job {
  id: string;
  kind: string;
  status: JobStatus;
  workspace_id: string | null;
  /** JSON value given to `enqueue`. */
  payload: unknown;
  /** JSON value given to `complete`; null until then. */
  result: unknown;
  /** The last failure's message (kept if a later attempt succeeds). */
  error: string | null;
  attempts: number;
  max_attempts: number;
  /** Milliseconds since the epoch, as are all job times. */
  run_at_ms: number;
  /** Who holds (or last held) the lease. */
  lease_owner: string | null;
  /** Set while `running`. */
  lease_expires_at_ms: number | null;
  created_at_ms: number;
  updated_at_ms: number;
  finished_at_ms: number | null;
}

/** A claimed job whose every attempt was cut short (its node died each time): not to be run again. */
export function exhaustedJob(job: Job): boolean {
  return job.attempts > job.max_attempts;
}

export interface JobQuery {
  kind?: string;
  status?: JobStatus;
  workspace_id?: string;
  /** Clamped to 1..1000; 100 by default. */
  limit?: number;
  /** Id of the last job of the previous page (jobs come in id order, which is creation order to the millisecond). */
  after?: string;
}

/**
 * The job queue. Leases are compared with the clock of the node that calls (`Date.now()`): keep the
 * nodes' clocks in sync and leases far longer than their drift. `heartbeat`, `complete` and `fail`
 * answer `undefined` when `owner` no longer holds the job (another node took it over after its lease
 * expired, or it already ended): the caller must then stop working on it.
 */
export interface JobRepository {
  enqueue(input: {
    kind: string;
    payload: unknown;
    workspace_id?: string | null;
    /** Not before this time; now by default. */
    run_at_ms?: number;
    /** 3 by default. */
    max_attempts?: number;
  }): Promise<Job>;
  /** Leases up to `limit` (1 by default, at most 100) due jobs of the given kinds to `owner`, the
   * earliest `run_at_ms` first. No job is ever leased to two owners at once. A job whose lease ran out
   * on its last attempt comes back once more with `attempts` past `max_attempts` (see `exhaustedJob`):
   * its worker gives up on what it was for, then `fail`s it. */
  claim(input: { kinds: readonly string[]; owner: string; leaseMs: number; limit?: number }): Promise<Job[]>;
  /** Extends the lease to `leaseMs` from now while `owner` still holds it. */
  heartbeat(id: string, owner: string, leaseMs: number): Promise<Job | undefined>;
  complete(id: string, owner: string, result?: unknown): Promise<Job | undefined>;
  /** Back to `queued` (due at `retryAtMs`, now by default) while attempts remain, `failed` after. */
  fail(id: string, owner: string, error: string, retryAtMs?: number): Promise<Job | undefined>;
  /**
   * Back to `queued` (due at `retryAtMs`, now by default) with the attempt its claim counted given back:
   * for a run cut short by its own node's stop (a deploy), which says nothing about the job. A run whose
   * node died is not given back: its lease lapses and counts, as the job may be what kills its nodes.
   */
  release(id: string, owner: string, retryAtMs?: number): Promise<Job | undefined>;
  get(id: string): Promise<Job | undefined>;
  list(query?: JobQuery): Promise<Page<Job>>;
}

export type StoreKind = 'sqlite' | 'postgres';

/** A committed change to a record that readers may hold in a cache. */
export interface StoreChange {
  resource:
    | 'workspace'
    | 'api_key'
    | 'credential'
    | 'config'
    | 'guardrail'
    | 'prompt'
    | 'prompt_partial'
    | 'rate_limit_policy';
  action: 'created' | 'updated' | 'deleted';
  workspace_id: string;
  id: string;
}

export type StoreChangeListener = (change: StoreChange) => void;

export interface OrganisationRepository {
  createOrganisation(input: { name: string }): Promise<Organisation>;
  getOrganisation(id: string): Promise<Organisation | undefined>;
  /** Oldest first. */
  listOrganisations(): Promise<Organisation[]>;
  createWorkspace(input: { organisation_id: string; name: string; slug: string }): Promise<Workspace>;
  getWorkspace(id: string): Promise<Workspace | undefined>;
  listWorkspaces(organisation_id: string): Promise<Workspace[]>;
  /**
   * Deletes a live workspace of the organisation, at once and as one: its API keys, rate-limit policies
   * and stored Responses are deleted; its credentials, configs, guardrails, prompts and partials are
   * deleted as their own DELETE leaves them; its batches under way are cancelled, and its files (and the
   * results files its batches still write) expire now; its slug is free again. Log records and batch
   * records are kept (unreadable through the API): logs until log retention deletes them. False when there is no such live
   * workspace. Nothing of another workspace is touched.
   */
  deleteWorkspace(organisation_id: string, id: string): Promise<boolean>;
}

export interface ApiKeyRepository {
  /** Creates a key and returns it with its secret value, which is never retrievable again. */
  createApiKey(input: {
    organisation_id: string;
    workspace_id: string;
    name: string;
    role: Role;
    expires_at?: number | null;
    metadata?: Record<string, string>;
    /** Use this value instead of generating one (GATEWAY_ADMIN_KEY); at least 16 characters. When a
     * key with this value already exists, that key is returned unchanged (idempotent start-up). */
    value?: string;
  }): Promise<{ key: ApiKey; value: string }>;
  /** Looks a key up by its secret value (hash comparison); revoked and expired keys included. */
  findApiKeyByValue(value: string): Promise<ApiKey | undefined>;
  getApiKey(workspace_id: string, id: string): Promise<ApiKey | undefined>;
  listApiKeys(workspace_id: string): Promise<ApiKey[]>;
  updateApiKey(
    workspace_id: string,
    id: string,
    patch: Partial<Pick<ApiKey, 'name' | 'role' | 'status' | 'expires_at' | 'metadata'>>,
  ): Promise<ApiKey | undefined>;
  /**
   * Gives an active key a new value, keeping everything else (id, role, metadata, expiry); the old value
   * stops matching at once. Undefined when the workspace has no active key by that id.
   */
  rotateApiKey(workspace_id: string, id: string): Promise<{ key: ApiKey; value: string } | undefined>;
  deleteApiKey(workspace_id: string, id: string): Promise<boolean>;
  countApiKeys(): Promise<number>;
  touchApiKey(id: string, at: number): Promise<void>;
}

export interface CredentialRepository {
  createCredential(
    input: Pick<
      ProviderCredential,
      'workspace_id' | 'organisation_id' | 'kind' | 'slug' | 'name' | 'provider' | 'secret'
    >,
  ): Promise<ProviderCredential>;
  getCredential(
    workspace_id: string,
    kind: ProviderCredential['kind'],
    slugOrId: string,
  ): Promise<ProviderCredential | undefined>;
  listCredentials(workspace_id: string, kind: ProviderCredential['kind']): Promise<ProviderCredential[]>;
  updateCredential(
    workspace_id: string,
    kind: ProviderCredential['kind'],
    slugOrId: string,
    patch: Partial<Pick<ProviderCredential, 'name' | 'provider' | 'secret' | 'status'>> & {
      /** Settings to merge into the stored secret as it is when written (null removes one). */
      settings?: Record<string, unknown>;
      /** Judges the change before it is written, against the credential as it is then (`stored`, its row
       * held until the write), with the secret it would have (`settings` merged in); throws to refuse it. */
      check?: (secret: ProviderSecret, stored: ProviderCredential) => void;
    },
  ): Promise<ProviderCredential | undefined>;
  deleteCredential(
    workspace_id: string,
    kind: ProviderCredential['kind'],
    slugOrId: string,
  ): Promise<boolean>;
}

/**
 * The stored documents a config, prompt or guardrail version names, as `kind:name` (`guardrail:no-pii`,
 * `prompt:support-answer`, `virtual_key:openai-prod`, `provider:anthropic-prod`, `config:route-a`), given
 * with the version when it is written: what a delete would break is then found by name
 * (`list…Referencing`). A version written without them is listed by `list…VersionsWithoutReferences`
 * until they are recorded (`record…VersionReferences`).
 */
export interface WithReferences {
  references?: readonly string[];
}

export interface ConfigRepository {
  createConfig(
    input: Pick<StoredConfig, 'workspace_id' | 'organisation_id' | 'slug' | 'name' | 'config'> &
      WithReferences,
  ): Promise<StoredConfig>;
  getConfig(workspace_id: string, slugOrId: string): Promise<StoredConfig | undefined>;
  listConfigs(workspace_id: string): Promise<StoredConfig[]>;
  /** A new `config` makes a new version; `name`/`status` alone do not. */
  updateConfig(
    workspace_id: string,
    slugOrId: string,
    patch: Partial<Pick<StoredConfig, 'name' | 'config' | 'status'>> & WithReferences,
  ): Promise<StoredConfig | undefined>;
  /** Oldest first. */
  listConfigVersions(workspace_id: string, slugOrId: string): Promise<StoredConfigVersion[]>;
  deleteConfig(workspace_id: string, slugOrId: string): Promise<boolean>;
  /** The live configs of the workspace whose current version names one of `references` (active or not);
   * oldest first. */
  listConfigsReferencing(workspace_id: string, references: readonly string[]): Promise<StoredConfig[]>;
  listConfigVersionsWithoutReferences(workspace_id: string): Promise<StoredConfigVersion[]>;
  recordConfigVersionReferences(
    workspace_id: string,
    config_id: string,
    version: number,
    references: readonly string[],
  ): Promise<void>;
}

export interface ReferenceRepository {
  /**
   * In a transaction (store.transaction): waits until no other transaction holds the references between
   * the workspace's stored documents, and holds them until this one ends. Taken first by a delete (or an
   * archive) that checks nothing names what it removes, and by a write that checks what it names exists,
   * so that each check stays true until its change is committed (PostgreSQL: an advisory transaction
   * lock; SQLite: the write lock the transaction already holds).
   */
  holdReferences(workspace_id: string): Promise<void>;
}

export interface GuardrailRepository {
  createGuardrail(
    input: Pick<StoredGuardrail, 'workspace_id' | 'organisation_id' | 'slug' | 'name' | 'guardrail'> &
      WithReferences,
  ): Promise<StoredGuardrail>;
  getGuardrail(workspace_id: string, slugOrId: string): Promise<StoredGuardrail | undefined>;
  /** Oldest first. */
  listGuardrails(workspace_id: string): Promise<StoredGuardrail[]>;
  /** A new `guardrail` makes a new version (even one equal to the current); `name` alone does not. */
  updateGuardrail(
    workspace_id: string,
    slugOrId: string,
    patch: Partial<Pick<StoredGuardrail, 'name' | 'guardrail'>> & WithReferences,
  ): Promise<StoredGuardrail | undefined>;
  /** Oldest first. */
  listGuardrailVersions(workspace_id: string, slugOrId: string): Promise<StoredGuardrailVersion[]>;
  deleteGuardrail(workspace_id: string, slugOrId: string): Promise<boolean>;
  /** The live guardrails of the workspace whose current version names one of `references` (what its
   * model-judged checks ask through: `config:<name>`, `virtual_key:<name>`); oldest first. */
  listGuardrailsReferencing(workspace_id: string, references: readonly string[]): Promise<StoredGuardrail[]>;
  listGuardrailVersionsWithoutReferences(workspace_id: string): Promise<StoredGuardrailVersion[]>;
  recordGuardrailVersionReferences(
    workspace_id: string,
    guardrail_id: string,
    version: number,
    references: readonly string[],
  ): Promise<void>;
}

/**
 * The partials a version's text includes, by the name it uses (`{{>house-style@2}}`: `house-style`), given
 * with the version when it is written: the versions a change to a partial reaches are then found by name
 * (`list…VersionsIncluding`). A version written without them is listed by `listUnindexed…Versions` until
 * they are recorded (`record…VersionIncludes`).
 */
export interface WithIncludes {
  includes?: readonly string[];
}

/** Prompts; partials have the same verbs (`PromptPartialRepository`). A version that does not exist is
 * refused by `publish…` with `not_found`. */
export interface PromptRepository {
  /** Version 1, published. */
  createPrompt(
    input: Pick<StoredPrompt, 'workspace_id' | 'organisation_id' | 'slug' | 'name' | 'prompt'> &
      WithIncludes &
      WithReferences,
  ): Promise<StoredPrompt>;
  getPrompt(workspace_id: string, slugOrId: string): Promise<StoredPrompt | undefined>;
  /** Oldest first. */
  listPrompts(workspace_id: string): Promise<StoredPrompt[]>;
  /** A new `prompt` makes the next version, not published; `name` alone makes none. */
  updatePrompt(
    workspace_id: string,
    slugOrId: string,
    patch: Partial<Pick<StoredPrompt, 'name' | 'prompt'>> & WithIncludes & WithReferences,
  ): Promise<StoredPrompt | undefined>;
  publishPrompt(workspace_id: string, slugOrId: string, version: number): Promise<StoredPrompt | undefined>;
  /** Oldest first. */
  listPromptVersions(workspace_id: string, slugOrId: string): Promise<StoredPromptVersion[]>;
  getPromptVersion(
    workspace_id: string,
    slugOrId: string,
    version: number,
  ): Promise<StoredPromptVersion | undefined>;
  deletePrompt(workspace_id: string, slugOrId: string): Promise<boolean>;
  /** Every version of a live prompt of the workspace that includes a partial by one of these names, with
   * the prompt's slug; prompts oldest first, then by version. */
  listPromptVersionsIncluding(
    workspace_id: string,
    partials: readonly string[],
  ): Promise<Array<StoredPromptVersion & { slug: string }>>;
  listUnindexedPromptVersions(workspace_id: string): Promise<StoredPromptVersion[]>;
  recordPromptVersionIncludes(
    workspace_id: string,
    prompt_id: string,
    version: number,
    includes: readonly string[],
  ): Promise<void>;
  /** Every version of a live prompt of the workspace that names one of `references`, with the prompt's
   * slug; prompts oldest first, then by version. */
  listPromptVersionsReferencing(
    workspace_id: string,
    references: readonly string[],
  ): Promise<Array<StoredPromptVersion & { slug: string }>>;
  listPromptVersionsWithoutReferences(workspace_id: string): Promise<StoredPromptVersion[]>;
  recordPromptVersionReferences(
    workspace_id: string,
    prompt_id: string,
    version: number,
    references: readonly string[],
  ): Promise<void>;
}

export interface PromptPartialRepository {
  createPromptPartial(
    input: Pick<StoredPromptPartial, 'workspace_id' | 'organisation_id' | 'slug' | 'name' | 'partial'> &
      WithIncludes,
  ): Promise<StoredPromptPartial>;
  getPromptPartial(workspace_id: string, slugOrId: string): Promise<StoredPromptPartial | undefined>;
  listPromptPartials(workspace_id: string): Promise<StoredPromptPartial[]>;
  updatePromptPartial(
    workspace_id: string,
    slugOrId: string,
    patch: Partial<Pick<StoredPromptPartial, 'name' | 'partial'>> & WithIncludes,
  ): Promise<StoredPromptPartial | undefined>;
  publishPromptPartial(
    workspace_id: string,
    slugOrId: string,
    version: number,
  ): Promise<StoredPromptPartial | undefined>;
  listPromptPartialVersions(workspace_id: string, slugOrId: string): Promise<StoredPromptPartialVersion[]>;
  getPromptPartialVersion(
    workspace_id: string,
    slugOrId: string,
    version: number,
  ): Promise<StoredPromptPartialVersion | undefined>;
  deletePromptPartial(workspace_id: string, slugOrId: string): Promise<boolean>;
  /** Every version of a live partial of the workspace that includes a partial by one of these names, with
   * the including partial's slug. */
  listPromptPartialVersionsIncluding(
    workspace_id: string,
    partials: readonly string[],
  ): Promise<Array<StoredPromptPartialVersion & { slug: string }>>;
  listUnindexedPromptPartialVersions(workspace_id: string): Promise<StoredPromptPartialVersion[]>;
  recordPromptPartialVersionIncludes(
    workspace_id: string,
    partial_id: string,
    version: number,
    includes: readonly string[],
  ): Promise<void>;
}

export interface RateLimitPolicyRepository {
  createRateLimitPolicy(
    input: Pick<
      RateLimitPolicy,
      'organisation_id' | 'workspace_id' | 'name' | 'type' | 'unit' | 'value' | 'conditions' | 'group_by'
    >,
  ): Promise<RateLimitPolicy>;
  getRateLimitPolicy(workspace_id: string, id: string): Promise<RateLimitPolicy | undefined>;
  /** The policy `id` in whichever workspace of the organisation it is (an id is unique across them all). */
  findRateLimitPolicy(organisation_id: string, id: string): Promise<RateLimitPolicy | undefined>;
  /** Oldest first; `total` counts every match, whatever the page. */
  listRateLimitPolicies(query: RateLimitPolicyQuery): Promise<{ data: RateLimitPolicy[]; total: number }>;
  updateRateLimitPolicy(
    workspace_id: string,
    id: string,
    patch: Partial<
      Pick<RateLimitPolicy, 'name' | 'type' | 'unit' | 'value' | 'status' | 'conditions' | 'group_by'>
    >,
  ): Promise<RateLimitPolicy | undefined>;
  deleteRateLimitPolicy(workspace_id: string, id: string): Promise<boolean>;
}

/** A stored response of the Responses API: its object as the gateway answered it (JSON). */
export interface StoredResponse {
  id: string;
  workspace_id: string;
  previous_response_id: string | null;
  status: string;
  /** The Response object. */
  body: Record<string, unknown>;
  created_at_ms: number;
  updated_at_ms: number;
}

/** One input item of a stored response, in the order it was sent. */
export interface StoredResponseItem {
  id: string;
  item: Record<string, unknown>;
}

export interface ResponseItemQuery {
  /** 1 to 100. */
  limit: number;
  order: 'asc' | 'desc';
  /** Item ids: the page starts after, or ends before, that item (in `order`). */
  after?: string;
  before?: string;
}

/** What a background response runs: the call that created it (encrypted at rest) and the request the
 * pipeline carries. */
export interface ResponseRun {
  call: BatchCall;
  request: Record<string, unknown>;
}

/** One event of a streamed background response: its number and its JSON text. */
export interface StoredResponseEvent {
  sequence_number: number;
  event: string;
}

export interface ResponseRepository {
  /** The response and its input items (and, for a background response, its run and first events),
   * written together. */
  createResponse(input: {
    workspace_id: string;
    id: string;
    previous_response_id: string | null;
    status: string;
    body: Record<string, unknown>;
    input_items: StoredResponseItem[];
    run?: ResponseRun;
    events?: StoredResponseEvent[];
  }): Promise<void>;
  /** Replaces the object (its status, output, usage) as the answer ends; false when it is gone, or,
   * with `from`, when its status is none of those. */
  updateResponse(
    workspace_id: string,
    id: string,
    patch: { status: string; body: Record<string, unknown> },
    from?: readonly string[],
  ): Promise<boolean>;
  /** The run of a background response; undefined when there is none (any more). */
  responseRun(workspace_id: string, id: string): Promise<ResponseRun | undefined>;
  appendResponseEvents(id: string, events: readonly StoredResponseEvent[]): Promise<void>;
  /** Its events after `after`, in order, at most `limit`. */
  listResponseEvents(id: string, after: number, limit: number): Promise<StoredResponseEvent[]>;
  /** The number of its last event; -1 when it has none. */
  lastResponseEvent(id: string): Promise<number>;
  /** Removes the runs and events of responses that ended (neither `queued` nor `in_progress`) before
   * `endedBeforeMs`; the number of events removed. */
  pruneResponseRuns(endedBeforeMs: number): Promise<number>;
  getResponse(workspace_id: string, id: string): Promise<StoredResponse | undefined>;
  /** Foreground responses still `in_progress` last written before `writtenBeforeMs` — left so by a node
   * that stopped while answering them (a background one has a run, and its job) — the oldest first, at
   * most `limit`. */
  interruptedResponses(writtenBeforeMs: number, limit: number): Promise<StoredResponse[]>;
  deleteResponse(workspace_id: string, id: string): Promise<boolean>;
  /**
   * The conversation that ends with response `id`: it and the responses its `previous_response_id` chain
   * names, oldest first, each with its input items, at most `maxLength` of them. `missing` is the id
   * where the chain breaks — a response not in the workspace, or the one before the oldest returned when
   * the chain is longer than `maxLength` —; undefined when the chain is whole.
   */
  getResponseChain(
    workspace_id: string,
    id: string,
    maxLength: number,
  ): Promise<{
    responses: Array<{ id: string; body: Record<string, unknown>; input_items: StoredResponseItem[] }>;
    missing: string | undefined;
  }>;
  /** A page of its input items; undefined when there is no such response. */
  listResponseInputItems(
    workspace_id: string,
    id: string,
    query: ResponseItemQuery,
  ): Promise<{ data: StoredResponseItem[]; has_more: boolean } | undefined>;
}

export interface LogRepository {
  insertLogs(records: LogRecord[]): Promise<void>;
  getLog(workspace_id: string, id: string): Promise<LogRecord | undefined>;
  /** On SQLite a page waiting for the reader thread is dropped when `signal` aborts (its request ended). */
  listLogs(query: LogQuery, options?: { signal?: AbortSignalLike }): Promise<Page<LogRecord>>;
  /** Deletes up to `limit` of the oldest records created before `cutoffMs`; resolves with how many. */
  deleteLogsBefore(cutoffMs: number, limit: number): Promise<number>;
  /** Sums of the log's rollups (store/rollups.ts), per time bucket and group. On SQLite it runs on the log
   * reader thread when there is one, and a query waiting for it is dropped when `signal` aborts. */
  analytics(query: AnalyticsQuery, options?: { signal?: AbortSignalLike }): Promise<AnalyticsRow[]>;
}

/** What analytics can group and filter by: a rollup key column, or a metadata key's value. */
export type AnalyticsDimension =
  'provider' | 'model' | 'api_key_id' | 'prompt_id' | 'workspace_id' | 'status_class' | { metadata: string };

export interface AnalyticsQuery {
  /** The workspaces read: the caller's, or every workspace of its organisation. */
  workspace_ids: string[];
  /** The rollups read: per minute, hour or day. */
  period: 'minute' | 'hour' | 'day';
  /** [from_ms, to_ms), whole periods. */
  from_ms: number;
  to_ms: number;
  /** Whole UTC days within [from_ms, to_ms) read from the daily rows instead of the period's: a summary's
   * days between its partial first and last (without an interval only). */
  whole_days?: { from_ms: number; to_ms: number };
  /** The size of a time bucket (a multiple of the period); absent: one bucket for the whole range. */
  interval_ms?: number;
  group_by?: AnalyticsDimension;
  /** Equality filters; a metadata filter must name the metadata key grouped by, if any. */
  filters: Partial<Record<Exclude<AnalyticsDimension, object>, string | number>> & {
    metadata?: { key: string; value: string };
  };
  /** With group_by: the groups kept, those of the most requests over the whole range; the others are
   * summed in one row per bucket (`other`). Absent: every group. */
  group_limit?: number;
}

export interface AnalyticsRow {
  /** Start of the bucket; null without an interval. */
  bucket_ms: number | null;
  /** The group's value; null without a group (or for calls that have none, e.g. no prompt). */
  group: string | null;
  /** The sums of the groups past the query's group_limit (group null). */
  other: boolean;
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost: number;
  priced: number;
  latency_ms_sum: number;
  /** Requests per latency bucket (rollups.ts LATENCY_BOUNDS_MS). */
  histogram: number[];
}

/** One answer of the semantic cache (docs/cache.md), as stored. */
export interface SemanticCacheEntry {
  id: string;
  workspace_id: string;
  /** The cache namespace it was stored under; '' for none. */
  namespace: string;
  /** The hash of everything that must be equal for the entry to answer (the index's partition). */
  partition_key: string;
  /** The simple cache's key of the request that stored it: an equal request is an exact match. */
  exact_key: string;
  /** Unit length. */
  vector: Float32Array;
  /** The answer, serialized as the simple cache keeps it. */
  answer: string;
  created_at_ms: number;
  expires_at_ms: number;
}

/** What an index keeps of an entry: all but the answer. */
export type SemanticCacheVector = Omit<SemanticCacheEntry, 'answer'>;

/** Where a removed entry was, so every node can drop it from its index. */
export interface SemanticCacheRemoval {
  id: string;
  workspace_id: string;
  partition_key: string;
}

export interface SemanticCacheRepository {
  insertSemanticCacheEntry(entry: SemanticCacheEntry): Promise<void>;
  getSemanticCacheEntry(workspace_id: string, id: string): Promise<SemanticCacheEntry | undefined>;
  /**
   * A partition's entries that are still fresh at `nowMs`, without their answers, oldest first; with
   * `limit`, only the newest `limit` of them.
   */
  listSemanticCachePartition(
    workspace_id: string,
    partition_key: string,
    nowMs: number,
    limit?: number,
  ): Promise<SemanticCacheVector[]>;
  /** The ids of a partition's entries that are still fresh at `nowMs`. */
  listSemanticCacheIds(workspace_id: string, partition_key: string, nowMs: number): Promise<string[]>;
  /** These entries of the workspace (those the store has), without their answers. */
  getSemanticCacheVectors(workspace_id: string, ids: readonly string[]): Promise<SemanticCacheVector[]>;
  deleteSemanticCacheEntry(workspace_id: string, id: string): Promise<SemanticCacheRemoval | undefined>;
  /** Every entry stored under the namespace ('' for none). */
  deleteSemanticCacheNamespace(workspace_id: string, namespace: string): Promise<SemanticCacheRemoval[]>;
  /** Every entry of the workspace (it was deleted). */
  deleteSemanticCacheWorkspace(workspace_id: string): Promise<SemanticCacheRemoval[]>;
  /** Deletes up to `limit` entries expired before `nowMs`; resolves with how many. */
  deleteExpiredSemanticCacheEntries(nowMs: number, limit: number): Promise<number>;
}

/** The record repositories, composed under the method names the rest of the gateway calls. */
export interface Repositories
  extends
    OrganisationRepository,
    ApiKeyRepository,
    CredentialRepository,
    ConfigRepository,
    GuardrailRepository,
    ReferenceRepository,
    PromptRepository,
    PromptPartialRepository,
    RateLimitPolicyRepository,
    ResponseRepository,
    SemanticCacheRepository,
    LogRepository {
  /** The queue's verbs are generic (`claim`, `complete`), so it keeps a namespace of its own. */
  readonly jobs: JobRepository;
  readonly files: FileRepository;
  readonly batches: BatchRepository;
  readonly fineTuningJobs: FineTuningJobRepository;
  readonly providerFiles: ProviderFileRepository;
  readonly providerBatches: ProviderBatchRepository;
}

export interface Store extends Repositories {
  readonly kind: StoreKind;
  /** Runs pending migrations (`openStore` already did). */
  migrate(): Promise<void>;
  /** Someone now waits for the rows being appended (a stop, for its final writes and then the close): on
   * SQLite, the thread that appends them runs at normal priority rather than idle from now until it is
   * closed, however promptly it answers meanwhile (thread-priority.ts). */
  prioritiseWrites(): void;
  close(): Promise<void>;
  /** Ends at once what `close` waits for, its connections destroyed: for a stop whose close of the store
   * did not end in time (the database no longer answers), in a process that goes on. */
  destroy(): void;
  /**
   * Runs `work` in one database transaction, with repositories bound to it: what it writes is
   * committed together when it resolves and rolled back when it throws (the error is passed on).
   * Inside `work` use only `tx`: on SQLite the store's one connection is the transaction's until it
   * ends, so a call on the store itself would wait for ever; on PostgreSQL it would run outside the
   * transaction. SQLite transactions take the write lock when they begin (one writer at a time).
   */
  transaction<T>(work: (tx: Repositories) => Promise<T>): Promise<T>;
  /**
   * Runs `work` while no other process on this database runs `serialized` with the same `name`: on
   * PostgreSQL under a session advisory lock of the schema (nodes starting together make the first
   * organisation, workspace and key once); on SQLite as it is (one process per file).
   */
  serialized<T>(name: string, work: () => Promise<T>): Promise<T>;
  /**
   * Calls `listener` after each change of a workspace, API key, credential, config, guardrail or rate-limit
   * policy made through this store, once it is committed (a transaction's changes when it commits, none if
   * it rolls back), before the call that made it resolves. Changes made by other processes are not seen. Listeners
   * must not throw (an error is reported as a process warning). Returns the unsubscribe function.
   */
  onChange(listener: StoreChangeListener): () => void;
}
