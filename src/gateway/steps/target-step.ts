/**
 * The steps of one target, composed like undici's interceptors or a koa chain: each step is a small
 * module that wraps the next (cache → retry → continuation → deadline → breaker → the attempt itself).
 * A step may answer without calling on (a cache hit, an open circuit), call on several times (retry),
 * or change the call on its way in (a continuation's body, a sink that tees the stream). Hooks, rate
 * limits and the semantic cache are steps too. A gateway runs DEFAULT_TARGET_STEPS (steps/index.ts), or the
 * `targetSteps` given to createGatewayServer; they are composed once, into `RoutingRuntime.modelChain`.
 */
import type { TargetConfig } from '../config/index.js';
import type { AttemptOutcome } from '../attempt.js';
import type { ResolvedTarget } from '../resolve-target.js';
import type { RoutedKind, RoutedRequest, RouteRun } from '../routing/route-types.js';
import type { CallSink } from '../sink.js';

/** One call of one target, as the steps see it. Steps pass it on, or a copy with fields replaced. Its
 * `endpoint` is the routed call's, beside the body for the target: the client's with override_params
 * applied (a continuation's later). */
export type TargetCall<K extends RoutedKind = RoutedKind> = RoutedRequest<K> & TargetCallFields;

export interface TargetCallFields {
  run: RouteRun;
  /** The effective config node (parent settings inherited) and its path, e.g. `targets[1]`. */
  node: TargetConfig;
  path: string;
  resolved: ResolvedTarget;
  /** The model the target is called with. */
  model: string | undefined;
  /** Where the target is reached, without secrets (custom host, region…): part of breaker and cache keys. */
  address: string | undefined;
  /** Streams only: where this call's chunks go. */
  sink: CallSink | undefined;
  /** 0 for the first call to this target, 1, 2… for its retries. */
  retry: number;
}

export type TargetHandler = (call: TargetCall) => Promise<AttemptOutcome>;
export type TargetStep = (next: TargetHandler) => TargetHandler;

/** The handler that runs `steps` in order around `last`. */
export function composeSteps(steps: readonly TargetStep[], last: TargetHandler): TargetHandler {
  let handler = last;
  for (let i = steps.length - 1; i >= 0; i--) handler = steps[i](handler);
  return handler;
}
