/**
 * What routing keeps between requests: the circuit breakers (in the gateway's shared state, so every
 * node sees the same circuit) and the random source of the loadbalance picker and of backoff jitter.
 * One runtime per gateway (per GatewayDeps), created on first use.
 */
import { createBreaker, createSharedState, type Breaker, type SharedState } from '../../state/index.js';
import type { GatewayDeps } from '../deps.js';

export interface RoutingRuntime {
  breaker: Breaker;
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
    runtime = { breaker: createBreaker(shared), random: Math.random };
    runtimes.set(deps, runtime);
  }
  return runtime;
}
