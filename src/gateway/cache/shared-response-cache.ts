/**
 * The response cache over SharedState: with Redis, every gateway node reads the answers any node
 * stored; Redis itself expires them (and evicts under its own memory policy).
 */
import type { SharedState } from '../../state/types.js';
import {
  parseAnswer,
  serializeAnswer,
  workspaceEntryPrefix,
  type CachedAnswer,
  type ResponseCache,
} from './response-cache.js';

export interface SharedResponseCacheOptions {
  /** Put before every cache key inside the state. Default `cache:`. */
  prefix?: string;
  /** Largest entry stored, bytes of serialized JSON. Default 8 MiB. */
  maxEntryBytes?: number;
}

export const DEFAULT_SHARED_MAX_ENTRY_BYTES = 8 * 1024 * 1024;

export class SharedResponseCache implements ResponseCache {
  private readonly prefix: string;
  readonly maxEntryBytes: number;

  constructor(
    private readonly state: SharedState,
    options: SharedResponseCacheOptions = {},
  ) {
    this.prefix = options.prefix ?? 'cache:';
    this.maxEntryBytes = options.maxEntryBytes ?? DEFAULT_SHARED_MAX_ENTRY_BYTES;
  }

  async get(key: string): Promise<CachedAnswer | undefined> {
    const text = await this.state.get(this.prefix + key);
    if (text === undefined) return undefined;
    const answer = parseAnswer(text);
    if (answer === undefined) await this.state.del(this.prefix + key);
    return answer;
  }

  async removeWorkspace(workspaceId: string): Promise<number> {
    return this.state.deletePrefixed(this.prefix + workspaceEntryPrefix(workspaceId));
  }

  async set(key: string, answer: CachedAnswer, maxAgeMs: number): Promise<void> {
    if (!(maxAgeMs > 0)) return;
    const text = serializeAnswer(answer);
    if (Buffer.byteLength(text, 'utf8') > this.maxEntryBytes) {
      await this.state.del(this.prefix + key);
      return;
    }
    await this.state.set(this.prefix + key, text, maxAgeMs);
  }
}
