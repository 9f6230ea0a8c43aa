/** The router's helpers over the shapes of one request's walk (the shapes are in ../pipeline-types.ts). */
import type { ModelRequest } from '../../providers/types.js';
import type { AttemptRecord, RouteRun, RouteState, RoutedRequest } from '../pipeline-types.js';
import { newSpanId } from '../context.js';

export type {
  AttemptRecord,
  NodeResult,
  PassthroughCall,
  RouteRun,
  RouteState,
  RoutedCall,
  RoutedKind,
  RoutedRequest,
} from '../pipeline-types.js';

/** The operation and body of a model call; the steps that only model calls run (cache, continuation, the
 * call itself) ask this, and a pass-through never reaches them. */
export function modelRequestOf(call: RoutedRequest): ModelRequest {
  if (call.endpoint === 'passthrough') throw new Error('a pass-through call reached a model-call step');
  return call;
}

export function newRouteState(): RouteState {
  return {
    targetPath: null,
    provider: null,
    retryCount: 0,
    providerCalls: 0,
    cacheStatus: null,
    cacheSimilarity: null,
    cacheEntryId: null,
    streamStatus: null,
    rateLimitHeaders: null,
    cost: null,
    responsesAccount: null,
    responsesInputOffset: null,
  };
}

/** Notes one call, breaker skip or cache answer of the walk. */
export function recordAttempt(
  run: RouteRun,
  record: Omit<AttemptRecord, 'ended' | 'cacheStatus' | 'prompt' | 'spanId'>,
): void {
  const { ctx } = run.call;
  // Field by field rather than a spread: one object of one shape, on every call's path.
  run.attempts.push({
    path: record.path,
    provider: record.provider,
    model: record.model,
    body: record.body,
    outcome: record.outcome,
    started: record.started,
    ended: performance.now(),
    retry: record.retry,
    cacheStatus: run.call.state.cacheStatus,
    prompt: ctx.targetPrompts?.get(record.path) ?? ctx.prompt,
    spanId: newSpanId(),
  });
}
