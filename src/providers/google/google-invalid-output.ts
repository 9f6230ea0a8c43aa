import { ProviderError } from '../../core/errors.js';
import type { GeminiCandidate } from './google-api-types.js';

/**
 * Finish reasons with which Gemini gives up on a function call it could not write (unparseable, of an
 * undeclared function, one too many). A candidate ending so with neither text nor a call carries no
 * answer at all: OpenAI fails such output ("The model produced invalid content", a 500), and so does the
 * gateway, rather than pass an empty `stop` off as the answer; a retry or a fallback can then take over.
 */
const INVALID_CALL_REASONS = new Set([
  'MALFORMED_FUNCTION_CALL',
  'UNEXPECTED_TOOL_CALL',
  'TOO_MANY_TOOL_CALLS',
]);

export function isInvalidCallFinish(reason: string | undefined): boolean {
  return reason !== undefined && INVALID_CALL_REASONS.has(reason);
}

export function invalidOutputError(provider: string, candidate: GeminiCandidate): ProviderError {
  const reason = candidate.finishReason ?? 'OTHER';
  const detail = candidate.finishMessage ? `: ${candidate.finishMessage}` : '';
  return new ProviderError({
    status: 500,
    provider,
    message: `${provider} produced invalid content (finishReason ${reason}) and no answer${detail}`,
    code: reason.toLowerCase(),
  });
}
