/**
 * The steps of one target, composed like undici's interceptors or a koa chain: each step is a small
 * module that wraps the next (cache → retry → continuation → deadline → breaker → the attempt itself).
 * A step may answer without calling on (a cache hit, an open circuit), call on several times (retry),
 * or change the call on its way in (a continuation's body, a sink that tees the stream). Hooks, rate
 * limits and the semantic cache are steps too. A gateway runs DEFAULT_TARGET_STEPS (steps/index.ts), or the
 * `targetSteps` given to createGatewayServer; they are composed once, into `RoutingRuntime.modelChain`.
 */
import type { TargetHandler, TargetStep } from '../pipeline-types.js';

export type { TargetCall, TargetCallFields, TargetHandler, TargetStep } from '../pipeline-types.js';

/** The handler that runs `steps` in order around `last`. */
export function composeSteps(steps: readonly TargetStep[], last: TargetHandler): TargetHandler {
  let handler = last;
  for (let i = steps.length - 1; i >= 0; i--) handler = steps[i](handler);
  return handler;
}
