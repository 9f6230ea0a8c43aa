/**
 * What routing keeps between requests: the circuit breakers and the response cache, both in the gateway's
 * shared state (process memory, or Redis so every node sees the same circuit and answers), and the random
 * source of the loadbalance picker and of backoff jitter. Built once per gateway in gateway-server.ts.
 */
import { createBreaker, type Breaker, type SharedState } from '../../state/index.js';
import { createResponseCache, type ResponseCache } from '../cache/index.js';
import {
  callPassthrough,
  callTarget,
  composeSteps,
  DEFAULT_TARGET_STEPS,
  PASSTHROUGH_STEPS,
  type TargetHandler,
  type TargetStep,
} from '../steps/index.js';

export interface RoutingRuntime {
  breaker: Breaker;
  /** The simple response cache (shared across nodes when the state is Redis). */
  cache: ResponseCache;
  /** [0, 1). */
  random: () => number;
  /** The steps every target of a model call runs, composed around the call (../steps/). */
  modelChain: TargetHandler;
  /** The same for a pass-through call: no cache, no continuation; the call relays the provider's answer. */
  passthroughChain: TargetHandler;
}

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
