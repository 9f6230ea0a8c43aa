/**
 * Whether an attempt reached a provider: it answered, or failed after its request was sent. A target its
 * open breaker skipped or refused before a call (`circuit_open`, `config`) did not, nor did one a
 * before-request hook denied (a `hooks_denied` with no byte of an answer: one denied after its answer was
 * called). The metrics count the time of such attempts as upstream time; the trace writes the others as
 * INTERNAL spans of their own, and places a before-request hook's span before the first that did.
 */
import type { AttemptOutcome } from './attempt.js';

export function reachedProvider(outcome: AttemptOutcome): boolean {
  if (outcome.ok) return true;
  if (outcome.reason === 'circuit_open' || outcome.reason === 'config') return false;
  return !deniedBeforeCall(outcome);
}

/** A before-request hook denied the attempt: no provider was called. */
export function deniedBeforeCall(outcome: AttemptOutcome): boolean {
  return !outcome.ok && outcome.reason === 'hooks_denied' && outcome.ttfbMs === null;
}
