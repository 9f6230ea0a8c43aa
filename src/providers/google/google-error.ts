import { ProviderError } from '../../core/errors.js';
import { retryAfterMs } from '../shared/retry-after.js';
import { withContextLengthCode } from '../shared/context-length.js';
import type { StreamFailureReader, UpstreamErrorResponse } from '../types.js';
import type { GeminiGenerateContentResponse, GoogleErrorObject } from './google-api-types.js';

/** google.rpc canonical codes → HTTP status, for errors that arrive without a usable numeric code. */
const STATUS_BY_RPC_CODE: Record<string, number> = {
  INVALID_ARGUMENT: 400,
  FAILED_PRECONDITION: 400,
  OUT_OF_RANGE: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  ABORTED: 409,
  ALREADY_EXISTS: 409,
  RESOURCE_EXHAUSTED: 429,
  CANCELLED: 499,
  INTERNAL: 500,
  UNKNOWN: 500,
  DATA_LOSS: 500,
  NOT_IMPLEMENTED: 501,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504,
};

/**
 * A non-2xx answer of Google (`{"error":{"code","message","status","details"}}`, or that object inside a
 * one-element array as Vertex sometimes sends) → ProviderError. The status is kept; `code` is the rpc
 * status in lower case (`resource_exhausted`); the wait comes from Retry-After or from RetryInfo's
 * `retryDelay`.
 */
export function googleErrorFromResponse(provider: string, res: UpstreamErrorResponse): ProviderError {
  const error = readErrorObject(res.bodyText);
  const message =
    error?.message ??
    (res.bodyText.trim() ? res.bodyText.trim().slice(0, 500) : `${provider} answered HTTP ${res.status}`);
  const failure = new ProviderError({
    status: res.status,
    message,
    provider,
    code: error?.status?.toLowerCase() ?? null,
    retryAfterMs: retryAfterMs(res.headers) ?? retryDelayMs(error),
    headers: pickHeaders(res.headers),
  });
  return withContextLengthCode(failure);
}

/** An `error` object found inside a 200 stream (or a 2xx body) → ProviderError with a fitting status. */
export function googleErrorFromObject(provider: string, error: GoogleErrorObject): ProviderError {
  const byCode =
    typeof error.code === 'number' && error.code >= 400 && error.code < 600 ? error.code : undefined;
  const status = byCode ?? (error.status ? STATUS_BY_RPC_CODE[error.status] : undefined) ?? 500;
  const failure = new ProviderError({
    status,
    message: error.message ?? `${provider} reported an error`,
    provider,
    code: error.status?.toLowerCase() ?? null,
    retryAfterMs: retryDelayMs(error),
  });
  return withContextLengthCode(failure);
}

/**
 * The failure one event of a Gemini stream (`streamGenerateContent?alt=sse`) reports: Google writes its
 * error object (`{"error":{"code","message","status"}}`) as an event of the 200 it already sent, alone or
 * as the first answer of an array as Vertex AI may. Undefined for any other event.
 */
export function geminiStreamError(provider: string, event: unknown): ProviderError | undefined {
  const body = (Array.isArray(event) ? event[0] : event) as GeminiGenerateContentResponse | null | undefined;
  return body?.error ? googleErrorFromObject(provider, body.error) : undefined;
}

/** Google's error object in a Gemini stream relayed as it is (a pass-through), as a translated call's
 * stream reads it (geminiStreamError). */
export function geminiEventFailure(provider: string): StreamFailureReader {
  return (event, json) => {
    if (event.kind !== 'sse') return undefined;
    if (json) return geminiStreamError(provider, json);
    // An array's data is no JSON object: read it as the translator does.
    if (!event.data.trimStart().startsWith('[')) return undefined;
    try {
      return geminiStreamError(provider, JSON.parse(event.data));
    } catch {
      return undefined;
    }
  };
}

function readErrorObject(text: string): GoogleErrorObject | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (Array.isArray(parsed)) parsed = parsed[0];
  const error = (parsed as { error?: unknown } | null)?.error;
  return typeof error === 'object' && error !== null ? (error as GoogleErrorObject) : undefined;
}

/** RetryInfo's `retryDelay` is a protobuf Duration in JSON: seconds with an `s` suffix ("34.4s"). */
export function retryDelayMs(error: GoogleErrorObject | undefined): number | undefined {
  const info = error?.details?.find((d) => d['@type']?.endsWith('google.rpc.RetryInfo'));
  const delay = info?.retryDelay;
  if (typeof delay !== 'string') return undefined;
  const match = /^(\d+(?:\.\d+)?)s$/.exec(delay.trim());
  return match ? Math.round(Number(match[1]) * 1000) : undefined;
}

function pickHeaders(headers: Record<string, string>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of ['retry-after', 'x-request-id']) {
    if (headers[name] !== undefined) kept[name] = headers[name];
  }
  return kept;
}
