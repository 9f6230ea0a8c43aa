/**
 * What routing keeps between requests: the breaker store and the random source of the loadbalance picker
 * and of backoff jitter. One runtime per gateway (per GatewayDeps), created on first use.
 */
import type { GatewayDeps } from '../deps.js';
import { createMemoryBreakerStore, type BreakerStore } from './circuit-breaker.js';

export interface RoutingRuntime {
  breakers: BreakerStore;
  /** [0, 1). */
  random: () => number;
}

const runtimes = new WeakMap<GatewayDeps, RoutingRuntime>();

/** The gateway's routing runtime. A breaker store shared by all nodes can be installed with `setRoutingRuntime`. */
export function routingRuntime(deps: GatewayDeps): RoutingRuntime {
  let runtime = runtimes.get(deps);
  if (!runtime) {
    runtime = { breakers: createMemoryBreakerStore(), random: Math.random };
    runtimes.set(deps, runtime);
  }
  return runtime;
}

export function setRoutingRuntime(deps: GatewayDeps, runtime: Partial<RoutingRuntime>): void {
  runtimes.set(deps, { ...routingRuntime(deps), ...runtime });
}
