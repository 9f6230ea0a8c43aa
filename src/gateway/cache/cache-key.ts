/**
 * The key of the simple response cache: a SHA-256 over a canonical JSON of everything that can change
 * the answer — and nothing else. Metadata never enters it, nor do headers but those a provider reads
 * that change its answer (ANSWER_HEADERS) and those the target forwards to the provider; strict compatibility does (it changes the answer's fields); the
 * cache namespace header partitions it; the workspace always does, so tenants never share answers; so does
 * the provider credential, hashed (credentialPart).
 */
import { createHash } from 'node:crypto';
import type { ProviderTarget } from '../../providers/types.js';
import { targetPart } from '../routing/target-settings.js';

export interface CacheKeyInput {
  /** Tenant boundary: answers are never shared across workspaces. */
  workspaceId: string;
  /** `chat`, `completions`, `embeddings`, … */
  endpoint: string;
  /** The answering provider's adapter id. */
  provider: string;
  /** The target's address when it is not the provider's default (custom_host, deployment, region). */
  host?: string | null | undefined;
  model: string;
  /** The body as sent upstream (override_params applied). */
  body: Record<string, unknown>;
  /** The `x-gateway-cache-namespace` header. */
  namespace?: string | null | undefined;
  /** Whether the answer keeps to OpenAI's fields only (strict compatibility). */
  strict: boolean;
  /** The client's request headers (lower-case); only ANSWER_HEADERS are read. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The target's settings that choose what answers behind its address (deployment, API version), as
   * written: TARGET_FIELDS of the resolved target. */
  target?: object | undefined;
  /** The headers the target sends the provider as they are (its `forward_headers`), lower-case names:
   * the provider may answer by them, so their values are part of the key. */
  forwarded?: Readonly<Record<string, string>> | undefined;
}

/** Client headers that providers pass on and that change the answer: Anthropic's API version and beta
 * features (a longer context, interleaved thinking…). */
export const ANSWER_HEADERS: readonly string[] = ['anthropic-beta', 'anthropic-version'];

/**
 * Body fields that do not change the answer. `stream` is left out of the body but kept as the
 * answer's form: a streamed and a non-streamed answer are stored under different keys.
 */
export const IGNORED_BODY_FIELDS: ReadonlySet<string> = new Set([
  'stream',
  'stream_options', // usage is always requested upstream; the cached stream keeps its usage chunk
  'user', // end-user identifier, for the provider's abuse monitoring
  'safety_identifier', // the same, newer name
  'metadata', // tags for the provider's stored completions
  'store', // whether the provider keeps the completion
  'prompt_cache_key', // a hint for the provider's own prompt cache
]);

/** The client's headers that change the answer (ANSWER_HEADERS), of `headers`. */
export function answerHeaders(
  headers: Readonly<Record<string, string | string[] | undefined>>,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name of ANSWER_HEADERS) {
    const value = headers[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/** The forwarded headers as a part of a key: none leaves the key as it was without `forward_headers`. */
export function forwardedPart(
  forwarded: Readonly<Record<string, string>> | undefined,
): Readonly<Record<string, string>> | undefined {
  return forwarded && Object.keys(forwarded).length > 0 ? forwarded : undefined;
}

/**
 * The provider credential the call is made with, as a SHA-256 (never the secret itself); undefined when it
 * has none. The provider answers what that credential may ask (its organisation, project, models): a
 * caller's own key (`Authorization`, or an inline config's `api_key`) must not be answered with what
 * another key asked, nor a wrong key with what a right one did. A stored credential's (virtual key's)
 * calls all carry the same secret, so they share their entries as before.
 */
export function credentialPart(target: object | undefined): string | undefined {
  if (!target) return undefined;
  const fields = target as Partial<ProviderTarget>;
  const secrets = [
    fields.api_key,
    fields.cloudc_access_key_id,
    fields.cloudc_secret_access_key,
    fields.cloudc_session_token,
    fields.cloudb_service_account_json?.private_key,
  ];
  if (secrets.every((secret) => secret === undefined)) return undefined;
  return createHash('sha256').update(JSON.stringify(secrets)).digest('hex');
}

/** Bumped whenever the key's makeup changes, so old entries are never read with a new meaning. */
const KEY_VERSION = 3;

export function cacheKey(input: CacheKeyInput): string {
  const body: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(input.body)) {
    if (!IGNORED_BODY_FIELDS.has(field)) body[field] = value;
  }
  const material = canonicalJson({
    v: KEY_VERSION,
    strict: input.strict,
    headers: answerHeaders(input.headers),
    forwarded: forwardedPart(input.forwarded),
    target: targetPart(input.target),
    credential: credentialPart(input.target),
    workspace: input.workspaceId,
    namespace: input.namespace ?? null,
    endpoint: input.endpoint,
    provider: input.provider,
    host: input.host ?? null,
    model: input.model,
    stream: input.body.stream === true,
    body,
  });
  return createHash('sha256').update(material).digest('hex');
}

/**
 * JSON with object keys sorted at every depth, so two bodies that differ only in key order give the
 * same text. As JSON.stringify: undefined members are left out (null in arrays), non-finite numbers
 * become null.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value);
    return text === undefined ? 'null' : text;
  }
  if (Array.isArray(value)) {
    return `[${value.map((item) => (item === undefined || typeof item === 'function' ? 'null' : canonicalJson(item))).join(',')}]`;
  }
  const record = value as Record<string, unknown>;
  const members: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const item = record[key];
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
    members.push(`${JSON.stringify(key)}:${canonicalJson(item)}`);
  }
  return `{${members.join(',')}}`;
}
