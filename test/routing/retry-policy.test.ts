import { describe, expect, it } from 'vitest';
import type { AttemptFailure } from '../../src/gateway/attempt.js';
import { GatewayError, ProviderError } from '../../src/core/errors.js';
import {
  BACKOFF_BASE_MS,
  BACKOFF_CAP_MS,
  backoffDelayMs,
  MAX_RETRY_AFTER_WAIT_MS,
  isRetryable,
  retryDelayMs,
  retryPolicyOf,
} from '../../src/gateway/routing/retry-policy.js';

function failure(
  status: number,
  reason: AttemptFailure['reason'] = 'status',
  extra: Partial<AttemptFailure> = {},
  retryAfterMs?: number,
): AttemptFailure {
  return {
    ok: false,
    error: new ProviderError({ status, message: 'x', provider: 'openai', retryAfterMs }),
    status,
    reason,
    afterFirstByte: false,
    usage: undefined,
    ttfbMs: null,
    malformedChunks: 0,
    ...extra,
  };
}

describe('retry policy', () => {
  it('without a retry config: no retries', () => {
    expect(retryPolicyOf(undefined).retries).toBe(0);
  });

  it('attempts is the number of retries after the first call', () => {
    expect(retryPolicyOf({ attempts: 3 }).retries).toBe(3);
  });

  it('retries the default statuses, never an unlisted 4xx', () => {
    const policy = retryPolicyOf({ attempts: 2 });
    for (const status of [429, 500, 502, 503, 504, 529])
      expect(isRetryable(failure(status), policy)).toBe(true);
    for (const status of [400, 401, 403, 404, 422, 501])
      expect(isRetryable(failure(status), policy)).toBe(false);
  });

  it('honours on_status_codes', () => {
    const policy = retryPolicyOf({ attempts: 2, on_status_codes: [400] });
    expect(isRetryable(failure(400), policy)).toBe(true);
    expect(isRetryable(failure(503), policy)).toBe(false);
  });

  it('retries connection errors before any byte, timeouts only when 408 is listed', () => {
    const policy = retryPolicyOf({ attempts: 1 });
    expect(isRetryable(failure(502, 'connection'), policy)).toBe(true);
    expect(isRetryable(failure(408, 'timeout'), policy)).toBe(false);
    expect(isRetryable(failure(408, 'timeout'), retryPolicyOf({ attempts: 1, on_status_codes: [408] }))).toBe(
      true,
    );
  });

  it('never retries after bytes reached the client, nor config errors, nor a client that left', () => {
    const policy = retryPolicyOf({ attempts: 1 });
    expect(isRetryable(failure(502, 'stream_cut', { afterFirstByte: true }), policy)).toBe(false);
    const config: AttemptFailure = {
      ...failure(400, 'config'),
      error: new GatewayError('unsupported_parameter', 'no'),
    };
    expect(isRetryable(config, policy)).toBe(false);
    expect(isRetryable(failure(499, 'client_gone'), policy)).toBe(false);
  });

  it('backs off exponentially with full jitter, capped', () => {
    expect(backoffDelayMs(1, () => 0.999999)).toBe(BACKOFF_BASE_MS - 1);
    expect(backoffDelayMs(2, () => 0.999999)).toBe(BACKOFF_BASE_MS * 2 - 1);
    expect(backoffDelayMs(3, () => 0.5)).toBe(BACKOFF_BASE_MS * 2);
    expect(backoffDelayMs(20, () => 0.999999)).toBe(BACKOFF_CAP_MS - 1);
    expect(backoffDelayMs(4, () => 0)).toBe(0);
    for (let i = 0; i < 200; i++) {
      const delay = backoffDelayMs(3);
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThan(BACKOFF_BASE_MS * 4);
    }
  });

  it('uses Retry-After only when use_retry_after_headers is set', () => {
    const rateLimited = failure(429, 'status', {}, 2000);
    const honouring = retryPolicyOf({ attempts: 1, use_retry_after_headers: true });
    expect(retryDelayMs(rateLimited, 1, honouring)).toEqual({ waitMs: 2000, retryAfterMs: 2000 });
    expect(retryDelayMs(rateLimited, 1, retryPolicyOf({ attempts: 1 }), () => 0.5)).toEqual({
      waitMs: 125,
      retryAfterMs: 0,
    });
    expect(retryDelayMs(failure(429), 1, honouring, () => 0)).toEqual({ waitMs: 0, retryAfterMs: 0 });
  });

  it("does not wait on a Retry-After beyond what is left of the target's 60 s", () => {
    const honouring = retryPolicyOf({ attempts: 3, use_retry_after_headers: true });
    const asking = (ms: number) => failure(429, 'status', {}, ms);
    expect(retryDelayMs(asking(MAX_RETRY_AFTER_WAIT_MS), 1, honouring)).toEqual({
      waitMs: MAX_RETRY_AFTER_WAIT_MS,
      retryAfterMs: MAX_RETRY_AFTER_WAIT_MS,
    });
    expect(retryDelayMs(asking(MAX_RETRY_AFTER_WAIT_MS + 1), 1, honouring)).toBeUndefined();
    // 20 s waited already: 50 s more would make 70 s.
    expect(retryDelayMs(asking(50_000), 2, honouring, Math.random, 40_000)).toBeUndefined();
    expect(retryDelayMs(asking(40_000), 2, honouring, Math.random, 40_000)?.waitMs).toBe(40_000);
    // Without use_retry_after_headers the header is not read, so it stops nothing.
    expect(retryDelayMs(asking(90_000), 1, retryPolicyOf({ attempts: 3 }), () => 0)).toEqual({
      waitMs: 0,
      retryAfterMs: 0,
    });
  });
});
