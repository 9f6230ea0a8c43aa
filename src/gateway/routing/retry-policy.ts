/**
 * Retry on one target (`retry`): which failures are retried and how long to wait before the next call.
 * `attempts` is the number of retries after the first call (attempts: 3 → at most 4 calls). Without a
 * retry config a target is called once.
 */
import type { RetryConfig } from '../config/index.js';
import type { AttemptFailure, AttemptOutcome } from '../attempt.js';

/** Transient failures: rate limited, the server's errors, and Anthropic's overloaded (529), its most common one. */
export const DEFAULT_RETRY_STATUS_CODES: readonly number[] = [429, 500, 502, 503, 504, 529];
/** Exponential backoff with full jitter: the n-th retry waits a random time in [0, min(cap, base·2ⁿ)). */
export const BACKOFF_BASE_MS = 250;
export const BACKOFF_CAP_MS = 8_000;
/**
 * The most a target's retries wait on the provider's Retry-After, all waits together. A provider that asks
 * for longer is not waited on: the target gives up at once (a fallback takes over, or the client gets the
 * provider's error and its Retry-After), as Portkey does, rather than holding the client for minutes.
 */
export const MAX_RETRY_AFTER_WAIT_MS = 60_000;

export interface RetryPolicy {
  retries: number;
  statusCodes: readonly number[];
  useRetryAfter: boolean;
}

export function retryPolicyOf(retry: RetryConfig | undefined): RetryPolicy {
  if (!retry) return { retries: 0, statusCodes: DEFAULT_RETRY_STATUS_CODES, useRetryAfter: false };
  return {
    retries: Math.max(0, Math.floor(retry.attempts)),
    statusCodes: retry.on_status_codes ?? DEFAULT_RETRY_STATUS_CODES,
    useRetryAfter: (retry.use_retry_after_headers ?? retry.use_retry_after_header) === true,
  };
}

/**
 * Whether a failed call may be tried again on the same target. Connection failures before any byte are
 * always retried; a timeout is retried only when 408 is listed; a status when it is listed (a 4xx that is
 * not listed, such as context_length_exceeded, never is). Nothing is retried once bytes reached the client
 * (the answer then continues on a fallback target) or when the failure is the gateway's own configuration.
 */
export function isRetryable(failure: AttemptFailure, policy: RetryPolicy): boolean {
  if (failure.afterFirstByte) return false;
  switch (failure.reason) {
    case 'client_gone':
    case 'config':
    case 'circuit_open':
      return false;
    case 'connection':
    case 'stream_cut':
      return true;
    case 'timeout':
      return policy.statusCodes.includes(408);
    default:
      return policy.statusCodes.includes(failure.status);
  }
}

/** The wait before retry number `retry` (1-based): backoff with full jitter. */
export function backoffDelayMs(retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, retry - 1));
  return Math.floor(random() * ceiling);
}

/** The wait before the next call, and how much of it is the provider's Retry-After. */
export interface RetryDelay {
  waitMs: number;
  retryAfterMs: number;
}

/**
 * The wait before the next call: the provider's Retry-After (when the config says to honour it and the
 * provider sent one), otherwise backoff with full jitter. Undefined when the provider asks for more than
 * `retryAfterLeftMs`, what is left of the target's MAX_RETRY_AFTER_WAIT_MS: no retry then.
 */
export function retryDelayMs(
  failure: AttemptFailure,
  retry: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
  retryAfterLeftMs: number = MAX_RETRY_AFTER_WAIT_MS,
): RetryDelay | undefined {
  const asked = 'retryAfterMs' in failure.error ? failure.error.retryAfterMs : undefined;
  if (policy.useRetryAfter && asked !== undefined) {
    const waitMs = Math.max(0, Math.ceil(asked));
    return waitMs > retryAfterLeftMs ? undefined : { waitMs, retryAfterMs: waitMs };
  }
  return { waitMs: backoffDelayMs(retry, random), retryAfterMs: 0 };
}

/**
 * An answer that went out with 246 (a hook failed without denying) is tried again, or handed to the next
 * fallback target, when 246 is among `codes`. A stream cannot be: the client already has it.
 */
export function asksAnotherTry(outcome: AttemptOutcome, codes: readonly number[] | undefined): boolean {
  return (
    outcome.ok && outcome.status === 246 && !outcome.streamed && codes !== undefined && codes.includes(246)
  );
}
