/**
 * What routing keeps between requests: the circuit breakers and the response cache, both in the gateway's
 * shared state (process memory, or Redis so every node sees the same circuit and answers), and the random
 * source of the loadbalance picker and of backoff jitter. Built once per gateway in gateway-server.ts.
 */
import { createBreaker, type Breaker, type SharedState } from '../../state/index.js';
import { createResponseCache, type ResponseCache } from '../cache/index.js';
import {
  callTarget,
  composeSteps,
  DEFAULT_TARGET_STEPS,
  type TargetHandler,
  type TargetStep,
} from '../steps/index.js';

export interface RoutingRuntime {
  breaker: Breaker;
  /** The simple response cache (shared across nodes when the state is Redis). */
  cache: ResponseCache;
  /** [0, 1). */
  random: () => number;
  /** The steps every target runs, composed around the call (../steps/). */
  targetChain: TargetHandler;
}

export function createRoutingRuntime(
  state: SharedState,
  options: { cacheMaxBytes: number; targetSteps?: readonly TargetStep[] },
): RoutingRuntime {
  return {
    breaker: createBreaker(state),
    cache: createResponseCache({ state, memory: { maxBytes: options.cacheMaxBytes } }),
    random: Math.random,
    targetChain: composeSteps(options.targetSteps ?? DEFAULT_TARGET_STEPS, callTarget),
  };
}
