/**
 * Between database rows and the plain records of `types.ts`: numbers that pg returns as strings,
 * 0/1 booleans, JSON kept as text. Pure functions; decryption is handed in by the caller.
 */
import type { Insertable, Selectable } from 'kysely';
import { SerializedJson } from './serialized-json.js';
import type {
  ApiKeysTable,
  ConfigsTable,
  CredentialsTable,
  GuardrailsTable,
  JobsTable,
  LogsTable,
  OrganisationsTable,
  PromptsTable,
  RateLimitPoliciesTable,
  WorkspacesTable,
} from './schema.js';
import type {
  ApiKey,
  Job,
  LogRecord,
  Organisation,
  ProviderCredential,
  PromptDocument,
  PromptPartialDocument,
  ProviderSecret,
  RateLimitPolicy,
  StoredConfig,
  StoredConfigVersion,
  StoredGuardrail,
  StoredGuardrailVersion,
  StoredPrompt,
  StoredPromptPartial,
  StoredPromptPartialVersion,
  StoredPromptVersion,
  Workspace,
} from './types.js';

/** One version of a versioned document (repositories/versioned-documents.ts), decrypted. */
export interface DocumentVersion<D> {
  owner_id: string;
  version: number;
  document: D;
  created_at: number | string;
}

export function toNumber(value: number | string | bigint): number {
  return typeof value === 'number' ? value : Number(value);
}

export function toNumberOrNull(value: number | string | bigint | null | undefined): number | null {
  return value === null || value === undefined ? null : toNumber(value);
}

export function toOrganisation(row: Selectable<OrganisationsTable>): Organisation {
  return { ...row, created_at: toNumber(row.created_at) };
}

export function toWorkspace(row: Selectable<WorkspacesTable>): Workspace {
  const { deleted_at: _deleted, ...live } = row;
  return { ...live, created_at: toNumber(row.created_at) };
}

export function toApiKey(row: Selectable<ApiKeysTable>): ApiKey {
  return {
    id: row.id,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    name: row.name,
    role: row.role as ApiKey['role'],
    key_prefix: row.key_prefix,
    status: row.status as ApiKey['status'],
    created_at: toNumber(row.created_at),
    updated_at: toNumber(row.updated_at),
    expires_at: toNumberOrNull(row.expires_at),
    last_used_at: toNumberOrNull(row.last_used_at),
    metadata: parseJson(row.metadata) as Record<string, string>,
  };
}

export function toCredential(row: Selectable<CredentialsTable>, secret: ProviderSecret): ProviderCredential {
  return {
    id: row.id,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    kind: row.kind as ProviderCredential['kind'],
    slug: row.slug,
    name: row.name,
    provider: row.provider,
    secret,
    status: row.status as ProviderCredential['status'],
    created_at: toNumber(row.created_at),
    updated_at: toNumber(row.updated_at),
  };
}

export function toConfig(row: Selectable<ConfigsTable>, config: Record<string, unknown>): StoredConfig {
  return {
    id: row.id,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    slug: row.slug,
    name: row.name,
    config,
    version: toNumber(row.version),
    status: row.status as StoredConfig['status'],
    created_at: toNumber(row.created_at),
    updated_at: toNumber(row.updated_at),
  };
}

export function toConfigVersion(version: DocumentVersion<Record<string, unknown>>): StoredConfigVersion {
  return {
    config_id: version.owner_id,
    version: version.version,
    config: version.document,
    created_at: toNumber(version.created_at),
  };
}

export function toGuardrail(
  row: Selectable<GuardrailsTable>,
  guardrail: Record<string, unknown>,
): StoredGuardrail {
  return {
    id: row.id,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    slug: row.slug,
    name: row.name,
    guardrail,
    version: toNumber(row.version),
    created_at: toNumber(row.created_at),
    updated_at: toNumber(row.updated_at),
  };
}

export function toGuardrailVersion(
  version: DocumentVersion<Record<string, unknown>>,
): StoredGuardrailVersion {
  return {
    guardrail_id: version.owner_id,
    version: version.version,
    guardrail: version.document,
    created_at: toNumber(version.created_at),
  };
}

export function toRateLimitPolicy(row: Selectable<RateLimitPoliciesTable>): RateLimitPolicy {
  return {
    id: row.id,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    name: row.name,
    type: row.type as RateLimitPolicy['type'],
    unit: row.unit as RateLimitPolicy['unit'],
    value: toNumber(row.value),
    status: row.status as RateLimitPolicy['status'],
    conditions: parseJson(row.conditions) as RateLimitPolicy['conditions'],
    group_by: parseJson(row.group_by) as RateLimitPolicy['group_by'],
    created_at: toNumber(row.created_at),
    updated_at: toNumber(row.updated_at),
  };
}

export function toLogRow(record: LogRecord): Insertable<LogsTable> {
  return {
    id: record.id,
    created_at_ms: record.created_at_ms,
    organisation_id: record.organisation_id,
    workspace_id: record.workspace_id,
    api_key_id: record.api_key_id,
    trace_id: record.trace_id,
    span_id: record.span_id,
    parent_span_id: record.parent_span_id,
    span_name: record.span_name,
    method: record.method,
    path: record.path,
    endpoint: record.endpoint,
    provider: record.provider,
    model: record.model,
    target: record.target,
    status: record.status,
    is_attempt: record.is_attempt ? 1 : 0,
    stream: record.stream ? 1 : 0,
    latency_ms: record.latency_ms,
    ttfb_ms: record.ttfb_ms,
    prompt_tokens: record.prompt_tokens,
    completion_tokens: record.completion_tokens,
    total_tokens: record.total_tokens,
    cached_tokens: record.cached_tokens,
    reasoning_tokens: record.reasoning_tokens,
    cost: record.cost,
    cache_status: record.cache_status,
    cache_similarity: record.cache_similarity,
    retry_count: record.retry_count,
    error_code: record.error_code,
    error_message: record.error_message,
    metadata: JSON.stringify(record.metadata ?? {}),
    request_body: jsonOrNull(record.request_body),
    response_body: jsonOrNull(record.response_body),
    hook_results: jsonOrNull(record.hook_results),
    prompt_id: record.prompt_id,
    prompt_version: record.prompt_version,
  };
}

/** The columns of a log row, in the order of `toLogValues`. */
export const LOG_ROW_COLUMNS = [
  'id',
  'created_at_ms',
  'organisation_id',
  'workspace_id',
  'api_key_id',
  'trace_id',
  'span_id',
  'parent_span_id',
  'span_name',
  'method',
  'path',
  'endpoint',
  'provider',
  'model',
  'target',
  'status',
  'is_attempt',
  'stream',
  'latency_ms',
  'ttfb_ms',
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'cached_tokens',
  'reasoning_tokens',
  'cost',
  'cache_status',
  'cache_similarity',
  'retry_count',
  'error_code',
  'error_message',
  'metadata',
  'request_body',
  'response_body',
  'hook_results',
  'prompt_id',
  'prompt_version',
] as const satisfies ReadonlyArray<keyof LogsTable>;

/**
 * A log row as values in LOG_ROW_COLUMNS order: what the SQLite log thread is sent. An array of values
 * crosses to a worker thread at a fraction of the cost of an object, whose every key is copied too.
 */
export function toLogValues(record: LogRecord): Array<string | number | null> {
  return [
    record.id,
    record.created_at_ms,
    record.organisation_id,
    record.workspace_id,
    record.api_key_id,
    record.trace_id,
    record.span_id,
    record.parent_span_id,
    record.span_name,
    record.method,
    record.path,
    record.endpoint,
    record.provider,
    record.model,
    record.target,
    record.status,
    record.is_attempt ? 1 : 0,
    record.stream ? 1 : 0,
    record.latency_ms,
    record.ttfb_ms,
    record.prompt_tokens,
    record.completion_tokens,
    record.total_tokens,
    record.cached_tokens,
    record.reasoning_tokens,
    record.cost,
    record.cache_status,
    record.cache_similarity,
    record.retry_count,
    record.error_code,
    record.error_message,
    JSON.stringify(record.metadata ?? {}),
    jsonOrNull(record.request_body),
    jsonOrNull(record.response_body),
    jsonOrNull(record.hook_results),
    record.prompt_id,
    record.prompt_version,
  ];
}

export function toLogRecord(row: Selectable<LogsTable>): LogRecord {
  return {
    id: row.id,
    created_at_ms: toNumber(row.created_at_ms),
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    api_key_id: row.api_key_id,
    trace_id: row.trace_id,
    span_id: row.span_id,
    parent_span_id: row.parent_span_id,
    span_name: row.span_name,
    method: row.method,
    path: row.path,
    endpoint: row.endpoint,
    provider: row.provider,
    model: row.model,
    target: row.target,
    status: toNumber(row.status),
    is_attempt: toNumber(row.is_attempt) === 1,
    stream: toNumber(row.stream) === 1,
    latency_ms: toNumber(row.latency_ms),
    ttfb_ms: toNumberOrNull(row.ttfb_ms),
    prompt_tokens: toNumberOrNull(row.prompt_tokens),
    completion_tokens: toNumberOrNull(row.completion_tokens),
    total_tokens: toNumberOrNull(row.total_tokens),
    cached_tokens: toNumberOrNull(row.cached_tokens),
    reasoning_tokens: toNumberOrNull(row.reasoning_tokens),
    cost: toNumberOrNull(row.cost),
    cache_status: row.cache_status,
    cache_similarity: toNumberOrNull(row.cache_similarity),
    retry_count: toNumber(row.retry_count),
    error_code: row.error_code,
    error_message: row.error_message,
    metadata: parseJson(row.metadata) as Record<string, string>,
    request_body: row.request_body === null ? null : parseJson(row.request_body),
    response_body: row.response_body === null ? null : parseJson(row.response_body),
    hook_results: row.hook_results === null ? null : parseJson(row.hook_results),
    prompt_id: row.prompt_id ?? null,
    prompt_version: toNumberOrNull(row.prompt_version),
  };
}

export function toJob(row: Selectable<JobsTable>): Job {
  return {
    id: row.id,
    kind: row.kind,
    status: row.status as Job['status'],
    workspace_id: row.workspace_id,
    payload: parseJson(row.payload),
    result: row.result === null ? null : parseJson(row.result),
    error: row.error,
    attempts: toNumber(row.attempts),
    max_attempts: toNumber(row.max_attempts),
    run_at_ms: toNumber(row.run_at_ms),
    lease_owner: row.lease_owner,
    lease_expires_at_ms: toNumberOrNull(row.lease_expires_at_ms),
    created_at_ms: toNumber(row.created_at_ms),
    updated_at_ms: toNumber(row.updated_at_ms),
    finished_at_ms: toNumberOrNull(row.finished_at_ms),
  };
}

function parseJson(text: string): unknown {
  return JSON.parse(text);
}

/** `undefined` and `null` bodies both mean "not logged". */
function jsonOrNull(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return value instanceof SerializedJson ? value.text : JSON.stringify(value);
}

/** The row columns a prompt or a partial shares: published versions keep their own number. */
type PublishedRow = Pick<
  PromptsTable,
  'id' | 'organisation_id' | 'workspace_id' | 'slug' | 'name' | 'version' | 'published_version'
> &
  Pick<Selectable<PromptsTable>, 'created_at' | 'updated_at'>;

function publishedRowFields(row: PublishedRow) {
  return {
    id: row.id,
    organisation_id: row.organisation_id,
    workspace_id: row.workspace_id,
    slug: row.slug,
    name: row.name,
    version: toNumber(row.version),
    published_version: toNumber(row.published_version),
    created_at: toNumber(row.created_at),
    updated_at: toNumber(row.updated_at),
  };
}

export function toPrompt(row: PublishedRow, prompt: PromptDocument): StoredPrompt {
  return { ...publishedRowFields(row), prompt };
}

export function toPromptVersion(version: DocumentVersion<PromptDocument>): StoredPromptVersion {
  return {
    prompt_id: version.owner_id,
    version: version.version,
    prompt: version.document,
    created_at: toNumber(version.created_at),
  };
}

export function toPromptPartial(row: PublishedRow, partial: PromptPartialDocument): StoredPromptPartial {
  return { ...publishedRowFields(row), partial };
}

export function toPromptPartialVersion(
  version: DocumentVersion<PromptPartialDocument>,
): StoredPromptPartialVersion {
  return {
    partial_id: version.owner_id,
    version: version.version,
    partial: version.document,
    created_at: toNumber(version.created_at),
  };
}
