/**
 * The response cache in process memory, bounded in bytes: least recently used entries are evicted
 * first, and an entry larger than a fraction of the bound is not stored at all (one huge answer must
 * not flush everything else). Entries are kept as their serialized text, so every hit is a fresh copy.
 */
import { LRUCache } from 'lru-cache';
import {
  parseAnswer,
  serializeAnswer,
  workspaceEntryPrefix,
  type CachedAnswer,
  type ResponseCache,
} from './response-cache.js';

export interface MemoryResponseCacheOptions {
  /** Upper bound of the stored bytes (UTF-8 of the entries plus their keys). Default 64 MiB. */
  maxBytes?: number;
  /** Largest entry stored, as a fraction of `maxBytes`. Default 1/8. */
  maxEntryFraction?: number;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
}

export const DEFAULT_MEMORY_CACHE_BYTES = 64 * 1024 * 1024;
export const DEFAULT_MAX_ENTRY_FRACTION = 1 / 8;

export class MemoryResponseCache implements ResponseCache {
  private readonly entries: LRUCache<string, string>;
  readonly maxBytes: number;
  readonly maxEntryBytes: number;

  constructor(options: MemoryResponseCacheOptions = {}) {
    this.maxBytes = options.maxBytes ?? DEFAULT_MEMORY_CACHE_BYTES;
    const fraction = options.maxEntryFraction ?? DEFAULT_MAX_ENTRY_FRACTION;
    if (!Number.isInteger(this.maxBytes) || this.maxBytes < 1) throw new RangeError('maxBytes must be ≥ 1');
    if (!(fraction > 0 && fraction <= 1)) throw new RangeError('maxEntryFraction must be in (0, 1]');
    this.maxEntryBytes = Math.max(1, Math.floor(this.maxBytes * fraction));
    this.entries = new LRUCache<string, string>({
      maxSize: this.maxBytes,
      maxEntrySize: this.maxEntryBytes,
      sizeCalculation: (text, key) => Math.max(1, Buffer.byteLength(text, 'utf8') + key.length),
      // An injected clock is read as is (the default caches "now" for 1 ms).
      ...(options.now ? { perf: { now: options.now }, ttlResolution: 0 } : {}),
    });
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.entries.calculatedSize;
  }

  get size(): number {
    return this.entries.size;
  }

  async get(key: string): Promise<CachedAnswer | undefined> {
    const text = this.entries.get(key);
    if (text === undefined) return undefined;
    const answer = parseAnswer(text);
    if (answer === undefined) this.entries.delete(key);
    return answer;
  }

  async removeWorkspace(workspaceId: string): Promise<number> {
    const prefix = workspaceEntryPrefix(workspaceId);
    let removed = 0;
    for (const key of [...this.entries.keys()]) {
      if (key.startsWith(prefix) && this.entries.delete(key)) removed++;
    }
    return removed;
  }

  async set(key: string, answer: CachedAnswer, maxAgeMs: number): Promise<void> {
    if (!(maxAgeMs > 0)) return;
    const text = serializeAnswer(answer);
    if (Buffer.byteLength(text, 'utf8') + key.length > this.maxEntryBytes) {
      // Too large to keep; an older answer under the same key must not outlive this one either.
      this.entries.delete(key);
      return;
    }
    this.entries.set(key, text, { ttl: Math.ceil(maxAgeMs) });
  }
}
