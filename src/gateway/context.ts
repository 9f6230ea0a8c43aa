/**
 * The RequestContext: who is calling, the trace they belong to, their metadata and cache directives.
 * Built once per request from the headers, read everywhere after.
 */
import { randomFillSync } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { AbortSignalLike } from '../core/abort.js';
import { GatewayError } from '../core/errors.js';
import { checkMetadataLimits, type MetadataLimits } from '../core/metadata-limits.js';
import { readTraceparent } from '../observability/tracing.js';
import type { ApiKey } from '../store/types.js';

export const HEADERS = {
  apiKey: 'x-gateway-api-key',
  provider: 'x-gateway-provider',
  virtualKey: 'x-gateway-virtual-key',
  customHost: 'x-gateway-custom-host',
  config: 'x-gateway-config',
  traceId: 'x-gateway-trace-id',
  spanId: 'x-gateway-span-id',
  parentSpanId: 'x-gateway-parent-span-id',
  spanName: 'x-gateway-span-name',
  metadata: 'x-gateway-metadata',
  cacheNamespace: 'x-gateway-cache-namespace',
  cacheForceRefresh: 'x-gateway-cache-force-refresh',
  strictCompat: 'x-gateway-strict-compat-compliance',
  /* response headers */
  retryAttemptCount: 'x-gateway-retry-attempt-count',
  lastUsedOptionIndex: 'x-gateway-last-used-option-index',
  cacheStatus: 'x-gateway-cache-status',
  cost: 'x-gateway-cost',
  cacheSimilarity: 'x-gateway-cache-similarity',
  cacheEntryId: 'x-gateway-cache-entry-id',
  answeringProvider: 'x-gateway-provider',
  requestId: 'x-gateway-request-id',
  promptId: 'x-gateway-prompt-id',
  promptVersion: 'x-gateway-prompt-version',
  /** A list the gateway could read the oldest part of only (a fine-tuning job's events on Azure OpenAI). */
  listTruncated: 'x-gateway-list-truncated',
} as const;

/** What every call knows of itself, however it came in: its ids, trace, metadata and cache directives. */
export interface CallIdentity {
  requestId: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  spanName: string | null;
  metadata: Record<string, string>;
  /** Date.now() at arrival. */
  startedAtMs: number;
  /** performance.now() at arrival, for durations. */
  startedAt: number;
  cacheNamespace: string | null;
  cacheForceRefresh: boolean;
  /** Aborted when the client goes away (or, for a job, when it is cancelled). */
  signal: AbortSignalLike;
}

/** An HTTP request's identity, as the server's onRequest hook reads it. */
export interface RequestContext extends CallIdentity {
  apiKey: ApiKey;
  headers: IncomingHttpHeaders;
}

const MAX_ID_LENGTH = 128;
const ID_PATTERN = /^[\w.:/@-]+$/;
export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  if (Array.isArray(value)) return value[0];
  return value === undefined || value === '' ? undefined : value;
}

function idHeader(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headerValue(headers, name);
  if (value === undefined) return undefined;
  if (value.length > MAX_ID_LENGTH || !ID_PATTERN.test(value)) {
    throw new GatewayError(
      'invalid_header',
      `${name} must be 1-${MAX_ID_LENGTH} characters of letters, digits and . _ : / @ -`,
      { param: name },
    );
  }
  return value;
}

/**
 * The x-gateway-metadata header's limits: the gateway's own field, with room beyond OpenAI's 16 pairs and
 * 64-character keys for what clients of other gateways already send in theirs (Portkey's metadata header
 * documents no such limit); values as long as OpenAI's.
 */
export const HEADER_METADATA_LIMITS: MetadataLimits = { pairs: 64, keyLength: 128, valueLength: 512 };

/**
 * Parses `x-gateway-metadata`: a JSON object of string values (numbers and booleans are kept as text), held
 * to HEADER_METADATA_LIMITS, characters counted as code points as in every other metadata
 * (core/metadata-limits.ts).
 */
export function parseMetadata(raw: string | undefined): Record<string, string> {
  if (raw === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new GatewayError('invalid_header', `${HEADERS.metadata} must be a JSON object`, {
      param: HEADERS.metadata,
    });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new GatewayError('invalid_header', `${HEADERS.metadata} must be a JSON object`, {
      param: HEADERS.metadata,
    });
  }
  // No prototype: a key named `__proto__` is metadata like any other, not a change of prototype that
  // drops it.
  const out = Object.create(null) as Record<string, string>;
  for (const [key, value] of Object.entries(parsed)) {
    const param = `${HEADERS.metadata}.${key}`;
    // An empty key names nothing a filter, a condition or a rate-limit policy could ask for.
    if (key.length === 0) {
      throw new GatewayError('invalid_header', `${param} is not a valid key: keys are at least 1 character`, {
        param,
      });
    }
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw new GatewayError('invalid_header', `metadata value of "${key}" must be a string`, { param });
    }
    out[key] = String(value);
  }
  checkMetadataLimits(out, HEADERS.metadata, 'invalid_header', HEADER_METADATA_LIMITS);
  return out;
}

// Random bytes for ids, drawn a block at a time: one `randomFillSync` per 256 span ids, and one hex string
// per id (randomUUID builds its text from 16 pieces, several hundred bytes of garbage per id).
const RANDOM_BLOCK_BYTES = 2048;
const randomBlock = Buffer.allocUnsafe(RANDOM_BLOCK_BYTES);
let randomOffset = RANDOM_BLOCK_BYTES;

/** Where the next `bytes` random bytes are in `randomBlock`. */
function takeRandom(bytes: number): number {
  if (randomOffset + bytes > RANDOM_BLOCK_BYTES) {
    randomFillSync(randomBlock);
    randomOffset = 0;
  }
  const at = randomOffset;
  randomOffset += bytes;
  return at;
}

/** 16 hex characters. */
export function newSpanId(): string {
  const at = takeRandom(8);
  return randomBlock.toString('hex', at, at + 8);
}

/** The character codes of the hex digits, by value. */
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');
/** A trace id's text is written here, then read as one string: no string for each of its parts. */
const traceIdText = Buffer.allocUnsafe(36);

/**
 * A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then randomness. Time-ordered ids keep the log
 * store's trace index append-mostly; random v4 ids land on random index pages and make every record's
 * insert more than twice as expensive.
 */
export function newTraceId(now = Date.now()): string {
  // tttttttt-tttt-7rrr-Vrrr-rrrrrrrrrrrr: 18 random hex digits, V the variant (10xx) with 2 random bits.
  const out = traceIdText;
  let time = now;
  for (let i = 12; i >= 0; i--) {
    if (i === 8) continue;
    out[i] = HEX_DIGITS[time % 16] as number;
    time = Math.floor(time / 16);
  }
  out[8] = 0x2d;
  out[13] = 0x2d;
  out[14] = 0x37; // the version, 7
  out[18] = 0x2d;
  out[23] = 0x2d;
  // The 3 + 3 + 12 random hex digits after the version and the variant, and the variant digit's 2 random
  // bits: the 10 random bytes' 20 nibbles, in order.
  const at = takeRandom(10);
  let nibble = 0;
  for (let i = 15; i < 36; i++) {
    if (i === 18 || i === 23) continue;
    const byte = randomBlock[at + (nibble >>> 1)] as number;
    const value = nibble & 1 ? byte & 0x0f : byte >>> 4;
    nibble += 1;
    out[i] = HEX_DIGITS[i === 19 ? 8 | (value & 3) : value] as number;
  }
  return out.toString('latin1', 0, 36);
}

/** Reads the trace headers; throws invalid_header for malformed ones. */
export function readTrace(
  headers: IncomingHttpHeaders,
): Pick<RequestContext, 'traceId' | 'spanId' | 'parentSpanId' | 'spanName'> {
  const spanName = headerValue(headers, HEADERS.spanName);
  if (spanName !== undefined && spanName.length > 256) {
    throw new GatewayError('invalid_header', `${HEADERS.spanName} must be at most 256 characters`, {
      param: HEADERS.spanName,
    });
  }
  const traceId = idHeader(headers, HEADERS.traceId);
  const parentSpanId = idHeader(headers, HEADERS.parentSpanId);
  // W3C `traceparent` (an OpenTelemetry-instrumented client) joins its trace, unless the gateway's own
  // trace header names another; an invalid one is ignored, as the W3C asks.
  const parent = traceId === undefined ? readTraceparent(headerValue(headers, 'traceparent')) : undefined;
  return {
    traceId: traceId ?? parent?.traceId ?? newTraceId(),
    spanId: idHeader(headers, HEADERS.spanId) ?? newSpanId(),
    parentSpanId: parentSpanId ?? parent?.parentSpanId ?? null,
    spanName: spanName ?? null,
  };
}

/**
 * `x-gateway-strict-compat-compliance`: `true` or `false` as written (as `x-gateway-cache-force-refresh`),
 * undefined when absent. Anything else is refused: a client sending `False` or `0` would otherwise keep
 * strict mode without being told.
 */
export function readStrictCompat(headers: IncomingHttpHeaders): boolean | undefined {
  const value = headerValue(headers, HEADERS.strictCompat);
  if (value === undefined) return undefined;
  if (value !== 'true' && value !== 'false') {
    throw new GatewayError('invalid_header', `${HEADERS.strictCompat} must be true or false`, {
      param: HEADERS.strictCompat,
    });
  }
  return value === 'true';
}

export function readCacheDirectives(
  headers: IncomingHttpHeaders,
): Pick<RequestContext, 'cacheNamespace' | 'cacheForceRefresh'> {
  const namespace = headerValue(headers, HEADERS.cacheNamespace);
  if (namespace !== undefined && namespace.length > 256) {
    throw new GatewayError('invalid_header', `${HEADERS.cacheNamespace} must be at most 256 characters`, {
      param: HEADERS.cacheNamespace,
    });
  }
  const refresh = headerValue(headers, HEADERS.cacheForceRefresh);
  if (refresh !== undefined && refresh !== 'true' && refresh !== 'false') {
    throw new GatewayError('invalid_header', `${HEADERS.cacheForceRefresh} must be true or false`, {
      param: HEADERS.cacheForceRefresh,
    });
  }
  return { cacheNamespace: namespace ?? null, cacheForceRefresh: refresh === 'true' };
}
