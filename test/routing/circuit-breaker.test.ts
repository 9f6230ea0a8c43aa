import { describe, expect, it } from 'vitest';
import type { AttemptFailure } from '../../src/gateway/attempt.js';
import { ProviderError } from '../../src/core/errors.js';
import { breakerKey, countsAsBreakerFailure } from '../../src/gateway/routing/circuit-breaker.js';

function failure(status: number, reason: AttemptFailure['reason'] = 'status'): AttemptFailure {
  return {
    ok: false,
    error: new ProviderError({ status, message: 'x', provider: 'openai' }),
    status,
    reason,
    afterFirstByte: false,
    usage: undefined,
    ttfbMs: null,
    malformedChunks: 0,
  };
}

const cb = { failure_threshold: 2, cooldown_interval: 30_000 };

describe('what the breaker counts', () => {
  it('by default counts statuses above 500, not 500 itself, nor 4xx', () => {
    expect(countsAsBreakerFailure(failure(501), cb)).toBe(true);
    expect(countsAsBreakerFailure(failure(503), cb)).toBe(true);
    expect(countsAsBreakerFailure(failure(599), cb)).toBe(true);
    expect(countsAsBreakerFailure(failure(500), cb)).toBe(false);
    expect(countsAsBreakerFailure(failure(429), cb)).toBe(false);
    expect(countsAsBreakerFailure(failure(400), cb)).toBe(false);
  });

  it('counts exactly failure_status_codes when given', () => {
    const custom = { ...cb, failure_status_codes: [500, 429] };
    expect(countsAsBreakerFailure(failure(500), custom)).toBe(true);
    expect(countsAsBreakerFailure(failure(429), custom)).toBe(true);
    expect(countsAsBreakerFailure(failure(503), custom)).toBe(false);
  });

  it('always counts timeouts, connection errors and broken streams; never config errors or a gone client', () => {
    const custom = { ...cb, failure_status_codes: [500] };
    expect(countsAsBreakerFailure(failure(408, 'timeout'), custom)).toBe(true);
    expect(countsAsBreakerFailure(failure(502, 'connection'), custom)).toBe(true);
    expect(countsAsBreakerFailure(failure(502, 'stream_cut'), custom)).toBe(true);
    expect(countsAsBreakerFailure(failure(400, 'config'), cb)).toBe(false);
    expect(countsAsBreakerFailure(failure(499, 'client_gone'), cb)).toBe(false);
  });

  it('keys by workspace, provider, address and model', () => {
    const base = { workspaceId: 'ws1', provider: 'openai', baseUrl: 'http://a/v1', model: 'm' };
    const key = breakerKey(base);
    expect(breakerKey({ ...base })).toBe(key);
    expect(breakerKey({ ...base, workspaceId: 'ws2' })).not.toBe(key);
    expect(breakerKey({ ...base, baseUrl: 'http://b/v1' })).not.toBe(key);
    expect(breakerKey({ ...base, model: 'n' })).not.toBe(key);
    expect(breakerKey({ ...base, provider: 'anthropic' })).not.toBe(key);
  });
});
