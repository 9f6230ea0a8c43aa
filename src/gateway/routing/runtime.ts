/**
 * What routing keeps between requests: the circuit breakers and the response cache, both in the gateway's
 * shared state (process memory, or Redis so every node sees the same circuit and answers), and the random
 * source of the loadbalance picker and of backoff jitter. Built once per gateway in gateway-server.ts.
 */
import { createBreaker, type SharedState } from '../../state/index.js';
import { createResponseCache } from '../cache/index.js';
import {
  callPassthrough,
  callTarget,
  composeSteps,
  DEFAULT_TARGET_STEPS,
  PASSTHROUGH_STEPS,
  type TargetStep,
} from '../steps/index.js';
import type { RoutingRuntime } from '../pipeline-types.js';

export type { RoutingRuntime } from '../pipeline-types.js';

export function createRoutingRuntime(
  state: SharedState,
  options: { cacheMaxBytes: number; targetSteps?: readonly TargetStep[] },
): RoutingRuntime {
  return {
    breaker: createBreaker(state),
    cache: createResponseCache({ state, memory: { maxBytes: options.cacheMaxBytes } }),
    random: Math.random,
    modelChain: composeSteps(options.targetSteps ?? DEFAULT_TARGET_STEPS, callTarget),
    passthroughChain: composeSteps(PASSTHROUGH_STEPS, callPassthrough),
  };
}
