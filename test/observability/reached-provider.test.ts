/**
 * Whether an attempt reached a provider is decided in one place (reached-provider.ts), for the metrics'
 * upstream time and for the trace: an attempt that failed without a byte of an answer (its connection
 * refused) did reach for its provider, and a before-request hook's span ends where it began.
 */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/core/errors.js';
import type { AttemptOutcome } from '../../src/gateway/attempt.js';
import type { HookResult } from '../../src/gateway/hooks/hook-result-types.js';
import type { AttemptRecord, CallSummary } from '../../src/gateway/pipeline-types.js';
import { deniedBeforeCall, reachedProvider } from '../../src/gateway/reached-provider.js';
import { newRouteState } from '../../src/gateway/routing/route-types.js';
import { callSpans } from '../../src/gateway/trace-observer.js';
import { PriceTable } from '../../src/observability/pricing/price-table.js';

const failure = (reason: string, ttfbMs: number | null): AttemptOutcome =>
  ({
    ok: false,
    error: new GatewayError('upstream_unreachable', 'down'),
    status: 502,
    reason,
    ttfbMs,
  }) as unknown as AttemptOutcome;

describe('reachedProvider', () => {
  it('tells the attempts that reached a provider from those skipped or denied before a call', () => {
    expect(reachedProvider(failure('connection', null))).toBe(true);
    expect(reachedProvider(failure('hooks_denied', 12))).toBe(true);
    expect(reachedProvider(failure('hooks_denied', null))).toBe(false);
    expect(reachedProvider(failure('circuit_open', null))).toBe(false);
    expect(reachedProvider(failure('config', null))).toBe(false);
    expect(deniedBeforeCall(failure('hooks_denied', null))).toBe(true);
    expect(deniedBeforeCall(failure('hooks_denied', 12))).toBe(false);
  });
});

describe('a before-request hook’s span', () => {
  it('ends where the first attempt that reached a provider began, one that failed without a byte too', () => {
    const startedAt = performance.now();
    const attempt = (outcome: AttemptOutcome, started: number): AttemptRecord => ({
      path: 'targets[0]',
      provider: 'openai',
      model: 'gpt-4o-mini',
      body: {},
      outcome,
      started,
      ended: started + 5,
      retry: 0,
      cacheStatus: null,
      prompt: undefined,
      spanId: `${started}`.padStart(16, '0').slice(0, 16),
    });
    const hook = {
      id: 'pii',
      type: 'guardrail',
      event: 'beforeRequestHook',
      verdict: true,
      deny: false,
      async: false,
      transformed: false,
      feedback: null,
      execution_time: 3,
      checks: [],
    } as unknown as HookResult;
    const ok = {
      ...failure('connection', null),
      ok: true,
      upstreamHeaders: {},
      status: 200,
      usage: undefined,
    } as unknown as AttemptOutcome;
    const summary = {
      ctx: {
        traceId: '0190a5b2-3c4d-7e8f-9a0b-1c2d3e4f5a6b',
        spanId: 'b7ad6b7169203331',
        parentSpanId: null,
        spanName: null,
        apiKey: { workspace_id: 'ws-1' },
        startedAt,
        method: 'POST',
      },
      endpoint: 'chat',
      stream: false,
      state: newRouteState(),
      status: 200,
      model: 'gpt-4o-mini',
      endedAt: startedAt + 100,
      error: undefined,
      requestBody: { model: 'gpt-4o-mini' },
      attempts: [attempt(failure('connection', null), startedAt + 10), attempt(ok, startedAt + 50)],
      hooks: { before_request_hooks: [hook], after_request_hooks: [] },
    } as unknown as CallSummary;
    const spans = callSpans(summary, new PriceTable({ providers: {} }), summary.endedAt);
    const hookSpan = spans.find((span) => span.name === 'hook pii')!;
    expect(hookSpan.endMs).toBeCloseTo(performance.timeOrigin + startedAt + 10, 3);
  });
});
