/**
 * The fast shared state: in-process memory by default, Redis when a URL is given (many nodes).
 */
import { MemoryState, type MemoryStateOptions } from './memory-state.js';
import type { SharedState } from './types.js';

export interface SharedStateOptions {
  /** Redis URL; absent → in-process memory. */
  redisUrl?: string | undefined;
  /** Prefix of every Redis key. Default `gateway:`. */
  prefix?: string;
  onError?: (error: Error) => void;
  memory?: MemoryStateOptions;
}

export const DEFAULT_STATE_PREFIX = 'gateway:';

/** Redis's client is loaded only when a URL asks for it: a single-node gateway never pays its memory. */
export async function createSharedState(options: SharedStateOptions = {}): Promise<SharedState> {
  if (options.redisUrl) {
    const { RedisState } = await import('./redis-state.js');
    return new RedisState({
      url: options.redisUrl,
      prefix: options.prefix ?? DEFAULT_STATE_PREFIX,
      ...(options.onError ? { onError: options.onError } : {}),
    });
  }
  return new MemoryState(options.memory);
}

export type { SharedState } from './types.js';
export { MemoryState, type MemoryStateOptions } from './memory-state.js';
export type { RedisStateOptions } from './redis-state.js';
export { createBreaker, type Breaker, type BreakerConfig, type BreakerState } from './breaker.js';
