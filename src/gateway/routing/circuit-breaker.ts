/**
 * The circuit breaker of a target (`cb_config`). After `failure_threshold` consecutive failures the
 * circuit opens: the target is skipped for `cooldown_interval` ms. Then one probe call is let through;
 * its success closes the circuit, its failure opens it for another cooldown. State lives behind
 * `BreakerStore` so that every gateway node sees the same breaker once the store is shared.
 */
import type { CircuitBreakerConfig } from '../config/index.js';
import type { AttemptFailure } from '../attempt.js';

/** What a caller may do now: call normally, call as the one probe of a half-open circuit, or skip. */
export type BreakerDecision = 'closed' | 'probe' | 'open';

export interface BreakerState {
  /** Consecutive failures since the last success (or since the circuit last closed). */
  failures: number;
  /** ms since the epoch until which the circuit is open; 0 when closed. */
  openUntil: number;
  /** ms since the epoch until which a probe is in flight (a lease, so a lost probe does not wedge it). */
  probeUntil: number;
}

/**
 * Shared breaker state. Each method is one atomic step, so a Redis implementation can run each as one
 * script: no read-modify-write spans two calls.
 */
export interface BreakerStore {
  /** Decides whether a call may go, claiming the probe slot when the cooldown is over. */
  acquire(key: string, now: number, cooldownMs: number): Promise<BreakerDecision>;
  /** A call succeeded: the circuit closes and the failure count resets. */
  recordSuccess(key: string): Promise<void>;
  /** A call failed: counts it, and opens the circuit at the threshold (a failed probe re-opens at once). */
  recordFailure(
    key: string,
    now: number,
    threshold: number,
    cooldownMs: number,
    wasProbe: boolean,
  ): Promise<BreakerState>;
  /** For tests and the admin surface. */
  peek(key: string): Promise<BreakerState | undefined>;
}

const CLOSED: BreakerState = { failures: 0, openUntil: 0, probeUntil: 0 };

/** The in-process store: one Map, bounded so that a config that names many targets cannot grow it forever. */
export function createMemoryBreakerStore(maxKeys = 10_000): BreakerStore {
  const states = new Map<string, BreakerState>();
  const put = (key: string, state: BreakerState) => {
    states.delete(key);
    states.set(key, state);
    if (states.size > maxKeys) {
      // The oldest-touched closed circuit goes first; an open one is kept (it protects an upstream).
      for (const [k, s] of states) {
        if (s.openUntil === 0) {
          states.delete(k);
          break;
        }
      }
      if (states.size > maxKeys) states.delete(states.keys().next().value as string);
    }
  };
  return {
    async acquire(key, now, cooldownMs) {
      const state = states.get(key);
      if (!state || state.openUntil === 0) return 'closed';
      if (now < state.openUntil) return 'open';
      if (now < state.probeUntil) return 'open';
      // The cooldown is over: this caller is the probe. Its lease lasts one more cooldown.
      put(key, { ...state, probeUntil: now + cooldownMs });
      return 'probe';
    },
    async recordSuccess(key) {
      if (states.has(key)) put(key, { ...CLOSED });
    },
    async recordFailure(key, now, threshold, cooldownMs, wasProbe) {
      const state = states.get(key) ?? { ...CLOSED };
      const failures = state.failures + 1;
      const open = wasProbe || failures >= threshold;
      const next: BreakerState = open
        ? { failures, openUntil: now + cooldownMs, probeUntil: 0 }
        : { ...state, failures };
      put(key, next);
      return next;
    },
    async peek(key) {
      const state = states.get(key);
      return state ? { ...state } : undefined;
    },
  };
}

/**
 * Whether a failed attempt counts against the breaker. Timeouts and connection failures (including a
 * stream that broke) always count; a status counts when it is in `failure_status_codes`, or by default
 * when it is above 500 (501-599: 500 itself is often caused by the request, not an outage, and can be
 * listed explicitly). Configuration errors and a client that went away never count.
 */
export function countsAsBreakerFailure(failure: AttemptFailure, config: CircuitBreakerConfig): boolean {
  switch (failure.reason) {
    case 'client_gone':
    case 'config':
      return false;
    case 'timeout':
    case 'connection':
    case 'stream_cut':
      return true;
    default: {
      const codes = config.failure_status_codes;
      return codes ? codes.includes(failure.status) : failure.status > 500;
    }
  }
}

/**
 * The breaker's key: the workspace, the provider, the address it is reached at and the model. Two configs
 * of one workspace that point at the same upstream model share one breaker; other workspaces, with other
 * credentials and quotas, never trip it.
 */
export function breakerKey(parts: {
  workspaceId: string;
  provider: string;
  baseUrl: string | undefined;
  model: string | undefined;
}): string {
  return ['cb', parts.workspaceId, parts.provider, parts.baseUrl ?? 'default', parts.model ?? ''].join('|');
}
