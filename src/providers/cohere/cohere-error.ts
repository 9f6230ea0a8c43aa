/** Cohere's failures → ProviderError. Cohere answers errors as `{ "id": "...", "message": "..." }`. */
import { ProviderError } from '../../core/errors.js';
import { withContextLengthCode } from '../shared/context-length.js';
import { retryAfterMs } from '../shared/retry-after.js';
import type { StreamFailureReader, UpstreamErrorResponse } from '../types.js';
import type { CohereErrorBody, CohereStreamEvent } from './cohere-api-types.js';
import { isCohereErrorFinish } from './map-cohere-finish-reason.js';

export const COHERE_PROVIDER_ID = 'cohere';

export function cohereErrorFromResponse(res: UpstreamErrorResponse): ProviderError {
  const message = readMessage(res.bodyText) ?? `Cohere answered with status ${res.status}.`;
  return withContextLengthCode(
    new ProviderError({
      status: res.status,
      message,
      provider: COHERE_PROVIDER_ID,
      retryAfterMs: retryAfterMs(res.headers),
    }),
  );
}

/** A chat that Cohere itself ended with finish_reason ERROR or TIMEOUT. */
export function cohereGenerationError(reason: string | undefined, detail: string | undefined): ProviderError {
  const timedOut = reason === 'TIMEOUT';
  return new ProviderError({
    status: timedOut ? 504 : 500,
    message:
      detail ||
      (timedOut ? 'Cohere timed out generating the answer.' : 'Cohere failed to generate the answer.'),
    provider: COHERE_PROVIDER_ID,
    code: timedOut ? 'provider_timeout' : 'provider_error',
  });
}

/**
 * The failure one event of a v2 chat stream reports: a `message-end` whose finish_reason is ERROR or
 * TIMEOUT or that carries an `error`, or an error object (`{"message": …}`) written into the stream in
 * place of an event. Undefined for any other event.
 */
export function cohereStreamError(event: Record<string, unknown>): ProviderError | undefined {
  if (typeof event.type !== 'string') {
    return typeof event.message === 'string' ? cohereGenerationError('ERROR', event.message) : undefined;
  }
  if (event.type !== 'message-end') return undefined;
  const { delta } = event as unknown as CohereStreamEvent;
  const reason = delta?.finish_reason;
  return isCohereErrorFinish(reason) || delta?.error
    ? cohereGenerationError(reason, delta?.error)
    : undefined;
}

/** The failure of a v2 chat stream relayed as it is (a pass-through), as a translated call's stream reads
 * it (cohereStreamError). */
export const cohereEventFailure: StreamFailureReader = (event, json) =>
  event.kind === 'sse' && json ? cohereStreamError(json) : undefined;

function readMessage(text: string): string | undefined {
  if (!text) return undefined;
  try {
    const body = JSON.parse(text) as CohereErrorBody | null;
    if (body && typeof body.message === 'string' && body.message) return body.message;
  } catch {
    // not JSON: a proxy's HTML page or plain text
  }
  const trimmed = text.trim();
  return trimmed ? trimmed.slice(0, 500) : undefined;
}
