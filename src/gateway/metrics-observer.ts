/**
 * Metrics: every call's summary measured into the gateway's Prometheus registry
 * (observability/metrics.ts), beside the log record the log observer writes from the same summary; and
 * a failure held back to run again, which has no record: a rate-limit refusal a batch line or a
 * background response waits out, or a batch line's call the gateway failed before any provider was called
 * (the store failing as it was routed), which the line runs again for.
 */
import type { CallMeasures, GatewayMetrics } from '../observability/metrics.js';
import { answeredFromCache } from './cache/response-cache.js';
import type { HookResult } from './hooks/hook-result-types.js';
import { reachedProvider } from './reached-provider.js';
import type { CallObserver, CallSummary } from './observer.js';

export function createMetricsObserver(metrics: GatewayMetrics): CallObserver {
  return {
    callEnded(summary) {
      const { ctx, state, error } = summary;
      const upstreamMs = upstreamTimeMs(summary);
      metrics.recordCall({
        labels: metrics.callLabels({
          endpoint: summary.endpoint,
          provider: state.provider,
          model: summary.model,
          workspace: ctx.apiKey.workspace_id,
          status: summary.status,
        }),
        durationSeconds: (summary.endedAt - ctx.startedAt) / 1000,
        ttfbSeconds: summary.stream && summary.ttfbMs !== null ? summary.ttfbMs / 1000 : null,
        upstreamSeconds: upstreamMs === null ? null : upstreamMs / 1000,
        tokens: spentTokens(summary),
        costDollars: state.cost,
        cacheStatus:
          state.cacheStatus === null || state.cacheStatus === 'DISABLED' ? null : state.cacheStatus,
        retries: state.retryCount,
        fallbacks: fallbacksOf(summary),
        errorCode: error ? String(error.code ?? error.type) : null,
      });
      if (summary.hooks) {
        for (const hook of summary.hooks.before_request_hooks) metrics.recordHook(hookMeasure(hook));
        for (const hook of summary.hooks.after_request_hooks) metrics.recordHook(hookMeasure(hook));
      }
    },
    // Measured as what it is, as any call's end is: a refusal a job waits out (a 429 and its code), a run
    // the gateway failed (a 500, internal_error). The calls and errors counted have the refusals and
    // failures the log does not record; the run that ends the call is counted again, as itself.
    callHeldBack(summary) {
      this.callEnded(summary);
    },
  };
}

/** Tokens a provider spent on the call: a cache hit's usage is the cached answer's, spent earlier. */
function spentTokens({ usage, state }: CallSummary): CallMeasures['tokens'] {
  if (!usage || answeredFromCache(state.cacheStatus)) return undefined;
  return {
    prompt: usage.prompt_tokens ?? 0,
    completion: usage.completion_tokens ?? 0,
    cached: usage.prompt_tokens_details?.cached_tokens ?? 0,
    reasoning: usage.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}

/** The time of every attempt that reached a provider (cache answers and breaker skips did not). */
function upstreamTimeMs(summary: CallSummary): number | null {
  let total: number | null = null;
  for (const attempt of summary.attempts) {
    if (answeredFromCache(attempt.cacheStatus) || !reachedProvider(attempt.outcome)) continue;
    total = (total ?? 0) + (attempt.ended - attempt.started);
  }
  return total;
}

/** Targets tried after another had failed: each change of target path past the first. */
function fallbacksOf(summary: CallSummary): number {
  let moves = 0;
  let path: string | undefined;
  for (const attempt of summary.attempts) {
    if (path !== undefined && attempt.path !== path) moves++;
    path = attempt.path;
  }
  return moves;
}

function hookMeasure(hook: HookResult): { event: string; outcome: string } {
  return { event: hook.event, outcome: hook.deny ? 'denied' : hook.verdict ? 'passed' : 'failed' };
}
