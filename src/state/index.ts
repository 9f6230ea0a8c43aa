/**
 * The fast shared state: in-process memory by default, Redis when a URL is given (many nodes).
 */
import { MemoryState, type MemoryStateOptions } from './memory-state.js';
import { LeasedRateCounter } from './leased-rate-counter.js';
import { MemoryRateCounter } from './memory-rate-counter.js';
import type { RateCounter } from './rate-counter.js';
import { RedisRateCounter } from './redis-rate-counter.js';
import { runsScripts, type SharedState } from './types.js';

export interface SharedStateOptions {
  /** Redis URL; absent → in-process memory. */
  redisUrl?: string | undefined;
  /** Prefix of every Redis key. Default `gateway:`. */
  prefix?: string;
  /** How long a Redis command waits for its reply before it fails (RedisStateOptions.commandTimeoutMs). */
  commandTimeoutMs?: number;
  onError?: (error: Error) => void;
  memory?: MemoryStateOptions;
}

export const DEFAULT_STATE_PREFIX = 'gateway:';

/** Redis's client is loaded only when a URL asks for it: a single-node gateway never pays its memory. */
export async function createSharedState(options: SharedStateOptions = {}): Promise<SharedState> {
  if (options.redisUrl) {
    const { RedisState } = await import('./redis-state.js');
    const state = new RedisState({
      url: options.redisUrl,
      prefix: options.prefix ?? DEFAULT_STATE_PREFIX,
      ...(options.commandTimeoutMs ? { commandTimeoutMs: options.commandTimeoutMs } : {}),
      ...(options.onError ? { onError: options.onError } : {}),
    });
    await state.firstConnection();
    return state;
  }
  return new MemoryState(options.memory);
}

export interface RateCounterOptions {
  /** The counters' clock, when not their own (tests inject time). */
  clock?: (() => number) | undefined;
  /** Leased units that could not be given back to Redis. */
  onError?: ((error: Error) => void) | undefined;
}

/** Rate counters beside the state: in Redis when the state is Redis (every node, with leases kept on this
 * node: leased-rate-counter.ts), else in this process. */
export function createRateCounter(state: SharedState, options: RateCounterOptions = {}): RateCounter {
  if (runsScripts(state)) return new LeasedRateCounter(new RedisRateCounter(state), options);
  return new MemoryRateCounter(options.clock);
}

export type { SharedState } from './types.js';
export type { RateCounter, RateReading, RateTake, RateTakeResult } from './rate-counter.js';
export { MemoryState, type MemoryStateOptions } from './memory-state.js';
export type { RedisStateOptions } from './redis-state.js';
export {
  createBreaker,
  type Breaker,
  type BreakerConfig,
  type BreakerPass,
  type BreakerState,
} from './breaker.js';
