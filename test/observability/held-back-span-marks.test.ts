/**
 * The marks of a run held back for a rate limit, for each refusal a job waits out: a policy's limit
 * reached (its id and its Retry-After) and the limits unreachable in fail mode `closed` (no policy, the
 * second it asks to wait). Either way the span's status is unset and it has no `error.type`.
 */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/core/errors.js';
import type { CallSummary } from '../../src/gateway/pipeline-types.js';
import { RateLimitExceededError } from '../../src/gateway/rate-limits/rate-limit-error.js';
import { newRouteState } from '../../src/gateway/routing/route-types.js';
import { heldBackSpans } from '../../src/gateway/trace-observer.js';
import { PriceTable } from '../../src/observability/pricing/price-table.js';
import type { RateLimitPolicy } from '../../src/store/types.js';

const prices = new PriceTable({ providers: {} });

function refusedRun(error: GatewayError): CallSummary {
  const startedAt = performance.now();
  return {
    ctx: {
      requestId: 'req-1',
      traceId: '0190a5b2-3c4d-7e8f-9a0b-1c2d3e4f5a6b',
      spanId: 'b7ad6b7169203331',
      parentSpanId: null,
      spanName: null,
      metadata: {},
      apiKey: { id: 'key-1', organisation_id: 'org-1', workspace_id: 'ws-1' },
      startedAtMs: Date.now(),
      startedAt,
      method: 'POST',
      url: '/v1/chat/completions',
      signal: new AbortController().signal,
    } as CallSummary['ctx'],
    endpoint: 'chat',
    stream: false,
    state: newRouteState(),
    status: error.status,
    model: 'gpt-4o-mini',
    usage: undefined,
    ttfbMs: null,
    endedAt: startedAt + 2,
    error,
    malformedChunks: 0,
    requestBody: { model: 'gpt-4o-mini' },
    responseBody: error.toBody(),
    responseText: undefined,
    attempts: [],
    hooks: undefined,
    hooksText: undefined,
  };
}

describe('the span of a run held back for a rate limit', () => {
  it('names the policy whose limit was reached and the wait its Retry-After asks', () => {
    const policy: RateLimitPolicy = {
      id: 'pol-1',
      organisation_id: 'org-1',
      workspace_id: 'ws-1',
      name: '',
      type: 'requests',
      unit: 'rpm',
      value: 60,
      status: 'active',
      conditions: [],
      group_by: [{ key: 'api_key' }],
      created_at: 0,
      updated_at: 0,
    };
    const error = new RateLimitExceededError(policy, 'api_key key-1', 7_000, { 'retry-after': '7' });
    const [run] = heldBackSpans(refusedRun(error), prices);
    expect(run.name).toBe('chat gpt-4o-mini');
    expect(run.error).toBeUndefined();
    expect(run.attributes).toMatchObject({
      'http.response.status_code': 429,
      'gateway.held_back.reason': 'rate_limit_exceeded',
      'gateway.held_back.wait_ms': 7_000,
      'gateway.rate_limit.policy_id': 'pol-1',
      'error.type': undefined,
    });
  });

  it('names no policy when the limits could not be checked, and the second it waits', () => {
    const error = new GatewayError('rate_limit_unavailable', 'Rate limits cannot be checked right now', {
      headers: { 'retry-after': '1' },
    });
    const [run] = heldBackSpans(refusedRun(error), prices);
    expect(run.error).toBeUndefined();
    expect(run.attributes).toMatchObject({
      'http.response.status_code': 503,
      'gateway.held_back.reason': 'rate_limit_unavailable',
      'gateway.held_back.wait_ms': 1_000,
      'gateway.rate_limit.policy_id': undefined,
      'error.type': undefined,
    });
  });
});
