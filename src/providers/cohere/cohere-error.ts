/** Cohere's failures → ProviderError. Cohere answers errors as `{ "id": "...", "message": "..." }`. */
import { ProviderError } from '../../core/errors.js';
import { withContextLengthCode } from '../shared/context-length.js';
import { retryAfterMs } from '../shared/retry-after.js';
import type { UpstreamErrorResponse } from '../types.js';
import type { CohereErrorBody } from './cohere-api-types.js';

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
