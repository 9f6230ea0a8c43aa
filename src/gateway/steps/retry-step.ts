/**
 * The `retry` of a target: a failed call is made again, after a backoff with jitter (or the provider's
 * Retry-After when asked, at most MAX_RETRY_AFTER_WAIT_MS in all), while the policy allows it and the
 * request's deadline leaves time to wait.
 * A call whose bytes already reached the client is never retried (routing/retry-policy.ts). A retry the
 * breaker skips (the circuit this request's own failures opened) is no retry made: it is not counted, and
 * the answer is the last call's, the provider's own error rather than the gateway's `circuit_open`.
 * Nor is a pass-through whose body was too large to be kept for a second send (passthrough/replayable-body.ts).
 * Nor is a call once the node's stop has destroyed the outbound connections (upstream.ts `stopped`): a
 * retry could not go out, and its wait would hold the call's record past the stop's final writes.
 */
import type { AbortSignalLike } from '../../core/abort.js';
import { GatewayError } from '../../core/errors.js';
import { gatewayFailure, type AttemptOutcome } from '../attempt.js';
import {
  asksAnotherTry,
  backoffDelayMs,
  isRetryable,
  MAX_RETRY_AFTER_WAIT_MS,
  retryDelayMs,
  retryPolicyOf,
  type RetryPolicy,
} from '../routing/retry-policy.js';
import type { TargetCall, TargetHandler, TargetStep } from './target-step.js';

export const retryStep: TargetStep = (next) => (call) => {
  const policy = retryPolicyOf(call.node.retry);
  return policy.retries > 0 ? withRetries(next, call, policy) : next(call);
};

async function withRetries(
  next: TargetHandler,
  call: TargetCall,
  policy: RetryPolicy,
): Promise<AttemptOutcome> {
  const { run } = call;
  const { ctx, state } = run.call;
  const { stopped } = run.deps.upstream;
  let last: AttemptOutcome | undefined;
  let retryAfterLeftMs = MAX_RETRY_AFTER_WAIT_MS;
  for (let retry = 0; ; retry++) {
    const outcome = await next(retry === 0 ? call : { ...call, retry });
    if (last && !outcome.ok && outcome.reason === 'circuit_open') {
      // Counted before the call, for a stream's headers to carry it; a skip sent nothing.
      state.retryCount -= 1;
      return last;
    }
    last = outcome;
    if (outcome.ok) {
      if (retry >= policy.retries || !asksAnotherTry(outcome, policy.statusCodes)) return outcome;
    } else {
      if (outcome.reason === 'client_gone' || ctx.signal.aborted || stopped.aborted) return outcome;
      if (retry >= policy.retries || !isRetryable(outcome, policy)) return outcome;
    }
    // A pass-through body larger than could be kept went once and cannot go again: the answer stands.
    if (run.call.passthrough?.body?.canSend === false) return outcome;
    const delay = outcome.ok
      ? { waitMs: backoffDelayMs(retry + 1, run.deps.routing.random), retryAfterMs: 0 }
      : retryDelayMs(outcome, retry + 1, policy, run.deps.routing.random, retryAfterLeftMs);
    // The provider asks for a longer wait than the gateway gives it: the target gives up now.
    if (delay === undefined) return outcome;
    const wait = delay.waitMs;
    retryAfterLeftMs -= delay.retryAfterMs;
    // A wait that would outlast the request's deadline moves on (to a fallback, if any) instead.
    if (performance.now() + wait >= run.deadline) return outcome;
    if (!(await waitUnlessAborted(wait, ctx.signal, stopped))) {
      if (!ctx.signal.aborted) return outcome;
      return gatewayFailure(new GatewayError('request_timeout', 'The client went away'), 'client_gone');
    }
    state.retryCount += 1;
  }
}

/** Waits `ms`; resolves false at once if `signal` or `stopped` aborts first. */
function waitUnlessAborted(ms: number, signal: AbortSignalLike, stopped: AbortSignalLike): Promise<boolean> {
  if (signal.aborted || stopped.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      stopped.removeEventListener('abort', onAbort);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      stopped.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
    stopped.addEventListener('abort', onAbort, { once: true });
  });
}
