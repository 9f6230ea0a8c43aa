/**
 * The simple response cache. With Redis configured, answers live in the shared state (every node sees
 * them); otherwise in a byte-bounded LRU in this process. See docs/cache.md.
 */
import type { SharedState } from '../../state/types.js';
import { MemoryResponseCache, type MemoryResponseCacheOptions } from './memory-response-cache.js';
import type { ResponseCache } from './response-cache.js';
import { SharedResponseCache, type SharedResponseCacheOptions } from './shared-response-cache.js';

export interface ResponseCacheOptions {
  /** The gateway's shared state; a Redis one makes the cache shared across nodes. */
  state?: SharedState;
  memory?: MemoryResponseCacheOptions;
  shared?: SharedResponseCacheOptions;
}

export function createResponseCache(options: ResponseCacheOptions = {}): ResponseCache {
  if (options.state?.kind === 'redis') return new SharedResponseCache(options.state, options.shared);
  return new MemoryResponseCache(options.memory);
}

export { cacheKey, canonicalJson, IGNORED_BODY_FIELDS, type CacheKeyInput } from './cache-key.js';
export {
  DEFAULT_MAX_AGE_SECONDS,
  maxAgeMs,
  answeredFromCache,
  workspaceEntryKey,
  ageSeconds,
  type CachedAnswer,
  type CachedJsonAnswer,
  type CachedStreamAnswer,
  type ResponseCache,
} from './response-cache.js';
export { MemoryResponseCache, type MemoryResponseCacheOptions } from './memory-response-cache.js';
export { SharedResponseCache, type SharedResponseCacheOptions } from './shared-response-cache.js';
