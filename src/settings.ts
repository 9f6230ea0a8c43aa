/**
 * Gateway settings: environment variables, optionally a JSON file named by GATEWAY_SETTINGS_FILE whose
 * keys are the same variable names (the environment wins). Every setting is listed in docs/settings.md.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { OtlpProtocol } from './observability/tracing.js';
import type { UpstreamLimits } from './core/upstream-limits.js';

export interface Settings {
  port: number;
  host: string;
  dataDir: string;
  /** PostgreSQL URL; absent → embedded SQLite in dataDir. */
  databaseUrl: string | undefined;
  /** Redis URL for shared state across nodes; absent → in-process memory. */
  redisUrl: string | undefined;
  adminKey: string | undefined;
  logLevel: string;
  /** Store request and response bodies in log records. */
  logBodies: boolean;
  /** Bodies larger than this (bytes of JSON) are stored truncated. */
  logBodyMaxBytes: number;
  logFlushIntervalMs: number;
  logBatchSize: number;
  /** Upper bound of a request body, bytes. */
  bodyLimitBytes: number;
  /** Default first-byte deadline and in-stream idle deadline when a config sets no request_timeout. */
  defaultRequestTimeoutMs: number;
  defaultStreamIdleTimeoutMs: number;
  /** The most of a provider's answer to a model call held: a whole answer's bytes, one stream event's. */
  upstreamLimits: UpstreamLimits;
  /** The most text (characters) of a streamed answer kept for a continuation on another target. */
  streamContinuationMaxChars: number;
  /** Longest silence (no byte either way) of a file's transfer to or from a provider's Files API. */
  fileTransferIdleTimeoutMs: number;
  /** `private`: custom_host may be loopback/private (self-hosted); `public`: only public addresses. */
  customHostPolicy: 'private' | 'public';
  /** The address policy of the URLs `default.validUrls` and `default.endpointReachability` probe, which come
   * from a caller's or a model's text: `public` unless the operator opts in to `private`. */
  urlCheckPolicy: 'private' | 'public';
  /** How long a stop may take, all of it: draining requests, the jobs in flight, the final writes, closing
   * the connections (stop-plan.ts). */
  shutdownGraceMs: number;
  /** Lifetime of cached API keys, credentials and configs read from the store. */
  lookupCacheTtlMs: number;
  /** Prefix of every Redis key the gateway writes. */
  redisPrefix: string;
  /** How long a command to the shared state (Redis) waits for its reply before it fails, ms. */
  redisTimeoutMs: number;
  /** Bound of the in-memory response cache, bytes. */
  cacheMaxBytes: number;
  /** The semantic cache's embedding target when a config's `cache.embedding` names none: a virtual key
   * of the caller's workspace, and the model. */
  semanticCacheVirtualKey: string | undefined;
  semanticCacheEmbeddingModel: string;
  /**
   * Entries of one semantic cache partition compared exactly before the approximate index takes over;
   * unset, as many as make 262,144 floats (1024 at 256 dimensions, 170 at 1536), at most 1024.
   */
  semanticCacheExactLimit: number | undefined;
  /** Semantic cache entries one node holds in memory, over all partitions; the least recently used go. */
  semanticCacheMaxEntries: number;
  /** Key of the HMAC-SHA256 signature on the bodies webhook checks send; unsigned when absent. */
  hooksWebhookSecret: string | undefined;
  /** Calls are measured and `GET /metrics` serves them. */
  metricsEnabled: boolean;
  /** When set, `GET /metrics` needs `Authorization: Bearer <token>`. */
  metricsToken: string | undefined;
  /** Log records older than this many days are deleted in the background; 0 keeps them forever. */
  logRetentionDays: number;
  /** When rate-limit counters cannot be reached: `open` lets calls through unchecked, `closed` answers 503. */
  rateLimitFailMode: 'open' | 'closed';
  /** Context windows (tokens) by model id substring, checked before the built-in table (docs/responses.md). */
  contextWindows: Readonly<Record<string, number>>;
  /** How long a rate-limit check may wait for the counters before the fail mode applies, ms. */
  rateLimitTimeoutMs: number;
  /** A price file laid over the shipped price table (docs/cost.md). */
  pricesFile: string | undefined;
  /** Metadata keys analytics can group and filter by (their values are rolled up with the log). */
  analyticsMetadataKeys: string[];
  /** OTLP/HTTP traces URL; no traces when absent (docs/observability.md). */
  tracesUrl: string | undefined;
  tracesServiceName: string;
  /** Headers sent with every OTLP export (an API key of the collector). */
  tracesHeaders: Record<string, string>;
  /** OTLP/HTTP's encoding of the export (`OTEL_EXPORTER_OTLP_PROTOCOL`): protobuf unless JSON is set. */
  tracesProtocol: OtlpProtocol;
  /** How long spans wait to be sent in a batch, ms. */
  tracesDelayMs: number;
  /** The share of traces whose calls are exported, 0 to 1 (`OTEL_TRACES_SAMPLER`); 1 unless set. */
  tracesSampleRatio: number;
  /** How long stopping may spend sending the spans still queued (`OTEL_BSP_EXPORT_TIMEOUT`), ms. */
  tracesExportTimeoutMs: number;
  /** Where file contents live: S3-compatible storage when a bucket is set, else `<dataDir>/blobs`. */
  s3: S3Settings | undefined;
  /** Largest file upload, bytes; a `batch` file's own bound and its most lines. */
  fileMaxBytes: number;
  batchFileMaxBytes: number;
  batchMaxLines: number;
  /** This node runs batch lines (false: it only serves the API). */
  batchWorker: boolean;
  /** Lines one node runs at once, over all batches; and one batch's default on one node. */
  batchNodeConcurrency: number;
  batchConcurrency: number;
  /** How long a claimed batch line (or batch job) stays leased without a heartbeat, ms. */
  batchLeaseMs: number;
  /** How often an idle worker looks for work, ms. */
  batchPollMs: number;
  /** The longest wait between two polls of a provider batch, ms. */
  batchPollMaxMs: number;
}

export interface S3Settings {
  bucket: string;
  /** Key prefix inside the bucket, e.g. `gateway/`. */
  prefix: string;
  region: string;
  /** An S3-compatible server's URL (MinIO, R2, …); absent → AWS. */
  endpoint: string | undefined;
  forcePathStyle: boolean;
  /** Absent → the AWS SDK's default credential chain. */
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
}

function s3Settings(source: Source): S3Settings | undefined {
  const bucket = source.GATEWAY_S3_BUCKET;
  if (!bucket) return undefined;
  const endpoint = source.GATEWAY_S3_ENDPOINT || undefined;
  return {
    bucket,
    prefix: source.GATEWAY_S3_PREFIX ?? '',
    region: source.GATEWAY_S3_REGION || 'us-east-1',
    endpoint,
    forcePathStyle: boolean(source, 'GATEWAY_S3_FORCE_PATH_STYLE', endpoint !== undefined),
    accessKeyId: source.GATEWAY_S3_ACCESS_KEY_ID || undefined,
    secretAccessKey: source.GATEWAY_S3_SECRET_ACCESS_KEY || undefined,
  };
}

type Source = Record<string, string | undefined>;

/** The longest string V8 makes (2^29 - 24 characters): a whole answer and an event are read as one. */
const MAX_STRING = 2 ** 29 - 24;

function readFileSource(env: NodeJS.ProcessEnv): Source {
  const file = env.GATEWAY_SETTINGS_FILE;
  if (!file) return {};
  const parsed = JSON.parse(readFileSync(resolve(file), 'utf8')) as Record<string, unknown>;
  const out: Source = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (value !== null && value !== undefined) out[key] = String(value);
  }
  return out;
}

function integer(source: Source, name: string, fallback: number, min = 0, max = Infinity): number {
  const raw = source[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = max === Infinity ? `≥ ${min}` : `from ${min} to ${max}`;
    throw new Error(`Setting ${name} must be an integer ${range}, got "${raw}"`);
  }
  return value;
}

/**
 * A URL of the store or of Redis, of one of `schemes`. The error names the scheme found, never the URL:
 * it carries the password.
 */
function serviceUrl(source: Source, name: string, schemes: readonly string[]): string | undefined {
  const raw = source[name];
  if (raw === undefined || raw === '') return undefined;
  let scheme: string | undefined;
  try {
    scheme = new URL(raw).protocol;
  } catch {
    scheme = undefined;
  }
  if (scheme === undefined || !schemes.includes(scheme)) {
    const expected = schemes.map((s) => `${s}//`).join(' or ');
    const found = scheme === undefined ? 'not a URL' : `a ${scheme}// URL`;
    throw new Error(`Setting ${name} must be a ${expected} URL, got ${found}`);
  }
  return raw;
}

/** A JSON object of model id substrings and their context windows in tokens. */
function contextWindows(source: Source, name: string): Record<string, number> {
  const raw = source[name];
  if (raw === undefined || raw === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error(`Setting ${name} must be a JSON object, got "${raw}"`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new Error(`Setting ${name} must be a JSON object of model names and token counts`);
  }
  for (const [model, tokens] of Object.entries(parsed)) {
    if (model === '' || !Number.isInteger(tokens) || (tokens as number) < 1) {
      throw new Error(
        `Setting ${name}: "${model}" must name a model and map to a positive integer of tokens`,
      );
    }
  }
  return parsed as Record<string, number>;
}

function boolean(source: Source, name: string, fallback: boolean): boolean {
  const raw = source[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new Error(`Setting ${name} must be true or false, got "${raw}"`);
}

export function loadSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const source: Source = { ...readFileSource(env), ...env };
  const policy = source.GATEWAY_CUSTOM_HOST_POLICY ?? 'private';
  if (policy !== 'private' && policy !== 'public') {
    throw new Error(`Setting GATEWAY_CUSTOM_HOST_POLICY must be "private" or "public", got "${policy}"`);
  }
  const urlCheckPolicy = source.GATEWAY_URL_CHECK_POLICY || 'public';
  if (urlCheckPolicy !== 'private' && urlCheckPolicy !== 'public') {
    throw new Error(
      `Setting GATEWAY_URL_CHECK_POLICY must be "private" or "public", got "${urlCheckPolicy}"`,
    );
  }
  const failMode = source.GATEWAY_RATE_LIMIT_FAIL_MODE || 'open';
  if (failMode !== 'open' && failMode !== 'closed') {
    throw new Error(`Setting GATEWAY_RATE_LIMIT_FAIL_MODE must be "open" or "closed", got "${failMode}"`);
  }
  return {
    port: integer(source, 'PORT', 8787, 0, 65_535),
    host: source.HOST || '127.0.0.1',
    dataDir: resolve(source.GATEWAY_DATA_DIR || './data'),
    databaseUrl: serviceUrl(source, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    redisUrl: serviceUrl(source, 'REDIS_URL', ['redis:', 'rediss:']),
    adminKey: source.GATEWAY_ADMIN_KEY || undefined,
    logLevel: source.LOG_LEVEL || 'info',
    logBodies: boolean(source, 'GATEWAY_LOG_BODIES', true),
    logBodyMaxBytes: integer(source, 'GATEWAY_LOG_BODY_MAX_BYTES', 65_536),
    logFlushIntervalMs: integer(source, 'GATEWAY_LOG_FLUSH_INTERVAL_MS', 20, 10),
    logBatchSize: integer(source, 'GATEWAY_LOG_BATCH_SIZE', 500, 1),
    bodyLimitBytes: integer(source, 'GATEWAY_BODY_LIMIT_BYTES', 25 * 1024 * 1024, 1024),
    defaultRequestTimeoutMs: integer(source, 'GATEWAY_REQUEST_TIMEOUT_MS', 600_000, 1),
    defaultStreamIdleTimeoutMs: integer(source, 'GATEWAY_STREAM_IDLE_TIMEOUT_MS', 300_000, 1),
    upstreamLimits: {
      // An embeddings answer of 2048 inputs of 3072 dimensions is 90 to 150 MB of JSON as providers print it.
      answerBytes: integer(source, 'GATEWAY_UPSTREAM_ANSWER_MAX_BYTES', 256 * 1024 * 1024, 1024, MAX_STRING),
      eventBytes: integer(source, 'GATEWAY_UPSTREAM_EVENT_MAX_BYTES', 64 * 1024 * 1024, 1024, MAX_STRING),
    },
    // 1 Mi characters: more than any model's longest output, and more than most context windows take back.
    streamContinuationMaxChars: integer(
      source,
      'GATEWAY_STREAM_CONTINUATION_MAX_CHARS',
      1024 * 1024,
      0,
      MAX_STRING,
    ),
    fileTransferIdleTimeoutMs: integer(source, 'GATEWAY_FILE_TRANSFER_IDLE_TIMEOUT_MS', 60_000, 1),
    customHostPolicy: policy,
    urlCheckPolicy,
    shutdownGraceMs: integer(source, 'GATEWAY_SHUTDOWN_GRACE_MS', 25_000),
    lookupCacheTtlMs: integer(source, 'GATEWAY_LOOKUP_CACHE_TTL_MS', 30_000),
    redisPrefix: source.GATEWAY_REDIS_PREFIX || 'gateway:',
    redisTimeoutMs: integer(source, 'GATEWAY_REDIS_TIMEOUT_MS', 1_000, 1),
    cacheMaxBytes: integer(source, 'GATEWAY_CACHE_MAX_BYTES', 64 * 1024 * 1024, 1),
    semanticCacheVirtualKey: source.GATEWAY_SEMANTIC_CACHE_VIRTUAL_KEY || undefined,
    semanticCacheEmbeddingModel: source.GATEWAY_SEMANTIC_CACHE_EMBEDDING_MODEL || 'text-embedding-3-small',
    semanticCacheExactLimit: source.GATEWAY_SEMANTIC_CACHE_EXACT_LIMIT
      ? integer(source, 'GATEWAY_SEMANTIC_CACHE_EXACT_LIMIT', 1024, 1)
      : undefined,
    semanticCacheMaxEntries: integer(source, 'GATEWAY_SEMANTIC_CACHE_MAX_ENTRIES', 100_000, 1),
    hooksWebhookSecret: source.GATEWAY_HOOKS_WEBHOOK_SECRET || undefined,
    metricsEnabled: boolean(source, 'GATEWAY_METRICS', true),
    metricsToken: source.GATEWAY_METRICS_TOKEN || undefined,
    logRetentionDays: integer(source, 'GATEWAY_LOG_RETENTION_DAYS', 0),
    rateLimitFailMode: failMode,
    rateLimitTimeoutMs: integer(source, 'GATEWAY_RATE_LIMIT_TIMEOUT_MS', 1_000, 1),
    pricesFile: source.GATEWAY_PRICES_FILE ? resolve(source.GATEWAY_PRICES_FILE) : undefined,
    analyticsMetadataKeys: (source.GATEWAY_ANALYTICS_METADATA_KEYS ?? '_user')
      .split(',')
      .map((key) => key.trim())
      .filter((key) => key.length > 0),
    tracesUrl: tracesUrl(source),
    tracesServiceName: source.OTEL_SERVICE_NAME || 'ai-gateway',
    tracesHeaders: otlpHeaders(source.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? source.OTEL_EXPORTER_OTLP_HEADERS),
    tracesProtocol: tracesProtocol(source),
    tracesDelayMs: integer(source, 'OTEL_BSP_SCHEDULE_DELAY', 5_000, 1),
    tracesSampleRatio: tracesSampleRatio(source),
    tracesExportTimeoutMs: integer(source, 'OTEL_BSP_EXPORT_TIMEOUT', 30_000),
    contextWindows: contextWindows(source, 'GATEWAY_CONTEXT_WINDOWS'),
    s3: s3Settings(source),
    fileMaxBytes: integer(source, 'GATEWAY_FILE_MAX_BYTES', 512 * 1024 * 1024, 1),
    batchFileMaxBytes: integer(source, 'GATEWAY_BATCH_FILE_MAX_BYTES', 200 * 1024 * 1024, 1),
    batchMaxLines: integer(source, 'GATEWAY_BATCH_MAX_LINES', 50_000, 1),
    batchWorker: boolean(source, 'GATEWAY_BATCH_WORKER', true),
    batchNodeConcurrency: integer(source, 'GATEWAY_BATCH_NODE_CONCURRENCY', 64, 1),
    batchConcurrency: integer(source, 'GATEWAY_BATCH_CONCURRENCY', 16, 1),
    batchLeaseMs: integer(source, 'GATEWAY_BATCH_LEASE_MS', 30_000, 100),
    batchPollMs: integer(source, 'GATEWAY_BATCH_POLL_MS', 500, 10),
    batchPollMaxMs: integer(source, 'GATEWAY_BATCH_POLL_MAX_MS', 5 * 60_000, 10),
  };
}

/**
 * OpenTelemetry's sampler variables, the samplers that decide by the trace id alone: `always_on` (the
 * default), `always_off`, `traceidratio` with `OTEL_TRACES_SAMPLER_ARG` (0 to 1, default 1).
 */
function tracesSampleRatio(source: Source): number {
  const sampler = source.OTEL_TRACES_SAMPLER || 'always_on';
  if (sampler === 'always_on') return 1;
  if (sampler === 'always_off') return 0;
  if (sampler !== 'traceidratio') {
    throw new Error(
      `Setting OTEL_TRACES_SAMPLER must be always_on, always_off or traceidratio, got "${sampler}"`,
    );
  }
  const raw = source.OTEL_TRACES_SAMPLER_ARG;
  if (raw === undefined || raw === '') return 1;
  const ratio = Number(raw);
  if (!(ratio >= 0 && ratio <= 1)) {
    throw new Error(`Setting OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, got "${raw}"`);
  }
  return ratio;
}

/** OpenTelemetry's protocol variables, the traces' own first; OTLP's default, `http/protobuf`, unless set. */
function tracesProtocol(source: Source): OtlpProtocol {
  const name = source.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL
    ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
    : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = source[name] || 'http/protobuf';
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new Error(
      `Setting ${name} must be http/protobuf or http/json (grpc is not supported), got "${protocol}"`,
    );
  }
  return protocol;
}

/** OpenTelemetry's variables: the traces URL as it is, or the base URL with `/v1/traces`. */
function tracesUrl(source: Source): string | undefined {
  const traces = source.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (traces) return traces;
  const base = source.OTEL_EXPORTER_OTLP_ENDPOINT;
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined;
}

/** `key1=value1,key2=value2`, values URL-encoded (OpenTelemetry's format). */
function otlpHeaders(raw: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (raw ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    const value = pair.slice(at + 1).trim();
    try {
      headers[pair.slice(0, at).trim()] = decodeURIComponent(value);
    } catch {
      headers[pair.slice(0, at).trim()] = value;
    }
  }
  return headers;
}
