import { ProviderError } from '../../core/errors.js';
import type { StreamFailureReader, UpstreamErrorResponse } from '../types.js';
import { retryAfterMs } from '../shared/retry-after.js';
import { withContextLengthCode } from '../shared/context-length.js';

/** Anthropic's error types and the HTTP status each stands for (used for errors inside a 200 stream). */
const STATUS_BY_ERROR_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** OpenAI-style types for Anthropic's, so clients see the names they know. */
const OPENAI_TYPE_BY_ERROR_TYPE: Record<string, string> = {
  request_too_large: 'invalid_request_error',
  billing_error: 'invalid_request_error',
  overloaded_error: 'api_error',
};

export function anthropicStatusForErrorType(type: string): number {
  return STATUS_BY_ERROR_TYPE[type] ?? 500;
}

/** A non-2xx answer of the Messages API (`{"type":"error","error":{"type","message"}}`) → ProviderError. */
export function anthropicErrorFromResponse(provider: string, res: UpstreamErrorResponse): ProviderError {
  const parsed = parseErrorBody(res.bodyText);
  const anthropicType = parsed?.type;
  const error = new ProviderError({
    status: res.status,
    provider,
    message: parsed?.message ?? (res.bodyText.trim().slice(0, 500) || `${provider} answered ${res.status}`),
    type: anthropicType ? (OPENAI_TYPE_BY_ERROR_TYPE[anthropicType] ?? anthropicType) : undefined,
    code: anthropicType ?? null,
    retryAfterMs: retryAfterMs(res.headers),
    headers: pick(res.headers, ['request-id', 'retry-after']),
  });
  return withContextLengthCode(error);
}

/** An `event: error` inside a 200 stream → ProviderError with the status its type stands for. */
export function anthropicStreamError(
  provider: string,
  error: { type?: string; message?: string },
): ProviderError {
  const type = error.type ?? 'api_error';
  const failure = new ProviderError({
    status: anthropicStatusForErrorType(type),
    provider,
    message: error.message ?? `${provider} stream error`,
    type: OPENAI_TYPE_BY_ERROR_TYPE[type] ?? type,
    code: type,
  });
  return withContextLengthCode(failure);
}

/** Anthropic's `error` event in a stream relayed as it is (a pass-through): the failure a translated
 * call's stream reads from it (anthropicStreamError). */
export function anthropicEventFailure(provider: string): StreamFailureReader {
  return (_event, json) => {
    if (json?.type !== 'error') return undefined;
    const error = (typeof json.error === 'object' && json.error !== null ? json.error : {}) as Record<
      string,
      unknown
    >;
    return anthropicStreamError(provider, {
      type: typeof error.type === 'string' ? error.type : undefined,
      message: typeof error.message === 'string' ? error.message : undefined,
    });
  };
}

function parseErrorBody(text: string): { type?: string; message?: string } | undefined {
  try {
    const body = JSON.parse(text) as { error?: { type?: unknown; message?: unknown } };
    const error = body?.error;
    if (!error || typeof error !== 'object') return undefined;
    return {
      type: typeof error.type === 'string' ? error.type : undefined,
      message: typeof error.message === 'string' ? error.message : undefined,
    };
  } catch {
    return undefined;
  }
}

function pick(headers: Record<string, string>, names: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) if (headers[name] !== undefined) out[name] = headers[name];
  return out;
}
