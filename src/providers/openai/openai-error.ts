import { ProviderError } from '../../core/errors.js';
import { retryAfterMs } from '../shared/retry-after.js';
import { withContextLengthCode } from '../shared/context-length.js';
import type { UpstreamErrorResponse } from '../types.js';

interface OpenAIErrorShape {
  error?: { message?: unknown; type?: unknown; code?: unknown; param?: unknown } | string;
  message?: unknown;
}

const asString = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;

/** An error `code` that is an HTTP status, as OpenRouter's are (`{"error":{"code":429,…}}` in a 200 answer
 * or stream): the status the failure has, so that a retry, a fallback and the client see it. */
export function statusOfErrorCode(code: unknown): number | undefined {
  return typeof code === 'number' && Number.isInteger(code) && code >= 400 && code <= 599 ? code : undefined;
}

/** Normalises an OpenAI-wire error answer (`{"error":{message,type,code,param}}`, or anything else). */
export function openAIErrorFromResponse(provider: string, res: UpstreamErrorResponse): ProviderError {
  let parsed: OpenAIErrorShape | undefined;
  try {
    parsed = JSON.parse(res.bodyText) as OpenAIErrorShape;
  } catch {
    parsed = undefined;
  }
  const error = parsed?.error;
  const detail = typeof error === 'object' && error !== null ? error : undefined;
  const message =
    asString(detail?.message) ??
    (typeof error === 'string' ? error : undefined) ??
    asString(parsed?.message) ??
    (res.bodyText.trim().slice(0, 500) || `${provider} answered with status ${res.status}`);
  const failure = new ProviderError({
    status: res.status,
    provider,
    message,
    type: asString(detail?.type),
    code: asString(detail?.code) ?? null,
    param: asString(detail?.param) ?? null,
    retryAfterMs: retryAfterMs(res.headers),
  });
  return withContextLengthCode(failure);
}

/**
 * Whether a stream event of an OpenAI-wire provider is its failure: an `event: error`, or a chunk with an
 * `error`. OpenAI's chunks carry no `error`: one that does is a failure even with choices, as OpenRouter
 * ends a stream that broke after its first tokens (its choice closed with finish_reason "error").
 */
export function isOpenAIStreamError(eventName: string | undefined, object: Record<string, unknown>): boolean {
  const error = object.error;
  return (
    eventName === 'error' ||
    (error !== undefined && object.choices === undefined) ||
    (typeof error === 'object' && error !== null)
  );
}

/** An error object sent inside a 200 stream by OpenAI-wire providers. */
export function openAIStreamError(provider: string, payload: Record<string, unknown>): ProviderError {
  const detail = (payload.error ?? payload) as Record<string, unknown>;
  const code = asString(detail.code);
  const type = asString(detail.type);
  const status =
    typeof detail.status === 'number'
      ? detail.status
      : (statusOfErrorCode(detail.code) ??
        (code === 'rate_limit_exceeded' || type === 'rate_limit_error'
          ? 429
          : type === 'invalid_request_error'
            ? 400
            : 502));
  const failure = new ProviderError({
    status,
    provider,
    message: asString(detail.message) ?? 'The provider reported an error inside the stream',
    type,
    code: code ?? null,
    param: asString(detail.param) ?? null,
  });
  return withContextLengthCode(failure);
}
