/**
 * The simple response cache: whole answers stored under `cacheKey`, for `max_age` seconds. Only
 * complete answers are stored: a full JSON body, or every chunk of a stream that ended normally.
 */

/** The config's `cache.max_age` when it is absent: one day. */
export const DEFAULT_MAX_AGE_SECONDS = 86_400;

export interface CachedJsonAnswer {
  kind: 'json';
  /** The complete response body as sent to the client. */
  body: unknown;
  /** When it was stored, milliseconds since the epoch. */
  storedAt: number;
}

export interface CachedStreamAnswer {
  kind: 'stream';
  /** The `data:` payloads of the stream in order, without the closing `[DONE]`. */
  chunks: string[];
  /** When it was stored, milliseconds since the epoch. */
  storedAt: number;
}

export type CachedAnswer = CachedJsonAnswer | CachedStreamAnswer;

/** Keys are a workspace's (`workspaceEntryKey`), so that a deleted workspace's entries can be found. */
export interface ResponseCache {
  /** The largest entry stored, bytes: a larger answer is not kept. */
  readonly maxEntryBytes: number;
  get(key: string): Promise<CachedAnswer | undefined>;
  /** Stores (or replaces) the answer for `maxAgeMs`; a non-positive age stores nothing. */
  set(key: string, answer: CachedAnswer, maxAgeMs: number): Promise<void>;
  /** Removes every entry of the workspace (it was deleted); resolves with how many. */
  removeWorkspace(workspaceId: string): Promise<number>;
}

/** The key an answer of the workspace is kept under: `cacheKey` already names the workspace, but as a
 * hash; this prefix lets its entries be found when the workspace is deleted. */
export function workspaceEntryKey(workspaceId: string, key: string): string {
  return `${workspaceId}:${key}`;
}

export function workspaceEntryPrefix(workspaceId: string): string {
  return workspaceEntryKey(workspaceId, '');
}

/** Whether a call's cache status says a cache answered it (nothing was sent to the provider). */
export function answeredFromCache(cacheStatus: string | null): boolean {
  return cacheStatus === 'HIT' || cacheStatus === 'SEMANTIC_HIT';
}

/**
 * The longest an entry is kept, seconds: a hundred years. `max_age` has no bound in the config, and an
 * expiry past what Redis and the databases hold (a 64-bit count of milliseconds) had every store refused,
 * so the cache silently kept nothing.
 */
export const MAX_AGE_LIMIT_SECONDS = 100 * 365 * 86_400;

/** Milliseconds an entry stays fresh, from the config's `cache.max_age` (seconds). */
export function maxAgeMs(cache: { max_age?: number | undefined } | undefined): number {
  return Math.min(cache?.max_age ?? DEFAULT_MAX_AGE_SECONDS, MAX_AGE_LIMIT_SECONDS) * 1000;
}

/** Seconds since the answer was stored (for an `Age` header). */
export function ageSeconds(answer: CachedAnswer, now: number = Date.now()): number {
  return Math.max(0, Math.floor((now - answer.storedAt) / 1000));
}

/** The stored text of an answer. */
export function serializeAnswer(answer: CachedAnswer): string {
  return answer.kind === 'json'
    ? JSON.stringify({ kind: 'json', body: answer.body, storedAt: answer.storedAt })
    : JSON.stringify({ kind: 'stream', chunks: answer.chunks, storedAt: answer.storedAt });
}

/** The answer in a stored text, or undefined when the text is not one (corrupt or foreign). */
export function parseAnswer(text: string): CachedAnswer | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  if (typeof record.storedAt !== 'number') return undefined;
  if (record.kind === 'json' && 'body' in record) {
    return { kind: 'json', body: record.body, storedAt: record.storedAt };
  }
  if (
    record.kind === 'stream' &&
    Array.isArray(record.chunks) &&
    record.chunks.every((chunk) => typeof chunk === 'string')
  ) {
    return { kind: 'stream', chunks: record.chunks as string[], storedAt: record.storedAt };
  }
  return undefined;
}
