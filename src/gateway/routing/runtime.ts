/**
 * What routing keeps between requests: the circuit breakers and the response cache (in the gateway's
 * shared state, so every node sees the same circuit and answers) and the random source of the loadbalance picker and of backoff jitter.
 * One runtime per gateway (per GatewayDeps), created on first use.
 */
import { createBreaker, createSharedState, type Breaker, type SharedState } from '../../state/index.js';
import { createResponseCache, type ResponseCache } from '../cache/index.js';
import type { GatewayDeps } from '../deps.js';

export interface RoutingRuntime {
  breaker: Breaker;
  /** The simple response cache (shared across nodes when the state is Redis). */
  cache: ResponseCache;
  /** [0, 1). */
  random: () => number;
}

const runtimes = new WeakMap<GatewayDeps, RoutingRuntime>();

/**
 * The gateway's routing runtime. Breakers live in `deps.state` (memory or Redis) when the gateway has
 * one; otherwise in an in-process state of this gateway's own.
 */
export function routingRuntime(deps: GatewayDeps): RoutingRuntime {
  let runtime = runtimes.get(deps);
  if (!runtime) {
    const shared = (deps as GatewayDeps & { state?: SharedState }).state ?? createSharedState();
    runtime = {
      breaker: createBreaker(shared),
      cache: createResponseCache({ state: shared }),
      random: Math.random,
    };
    runtimes.set(deps, runtime);
  }
  return runtime;
}
