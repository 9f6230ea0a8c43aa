/**
 * A batch line refused by the rate limits runs again later instead of ending in the error file: when a
 * policy's limit is reached (429, after its Retry-After), and when the limits cannot be checked at all
 * (503 with fail mode `closed`, Redis unreachable: after its Retry-After of a second). Other errors are
 * the line's answer.
 */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/core/errors.js';
import { rateLimitWaitMs } from '../../src/gateway/batches/batch-output.js';

const refusal = (error: GatewayError) => ({ kind: 'error' as const, error, status: error.status });

describe('rateLimitWaitMs', () => {
  it("waits a policy's Retry-After", () => {
    const error = new GatewayError('rate_limit_exceeded', 'over', { headers: { 'retry-after': '7' } });
    expect(rateLimitWaitMs(refusal(error))).toBe(7_000);
  });

  it('waits for rate limits that cannot be checked right now, rather than failing the line', () => {
    const error = new GatewayError('rate_limit_unavailable', 'unreachable', {
      headers: { 'retry-after': '1' },
    });
    expect(rateLimitWaitMs(refusal(error))).toBe(1_000);
  });

  it('does not wait on other errors', () => {
    expect(rateLimitWaitMs(refusal(new GatewayError('invalid_body', 'bad')))).toBeUndefined();
    expect(rateLimitWaitMs(refusal(new GatewayError('upstream_unreachable', 'down')))).toBeUndefined();
  });
});
