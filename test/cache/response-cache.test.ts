/**
 * The ResponseCache contract on the byte-bounded memory LRU, and on SharedState (memory and the real
 * Redis); then what only one of them does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createResponseCache,
  DEFAULT_MAX_AGE_SECONDS,
  MemoryResponseCache,
  SharedResponseCache,
  ageSeconds,
  maxAgeMs,
  type CachedAnswer,
  type ResponseCache,
} from '../../src/gateway/cache/index.js';
import { MemoryState } from '../../src/state/memory-state.js';
import { RedisState } from '../../src/state/redis-state.js';
import type { SharedState } from '../../src/state/types.js';
import {
  deleteRedisKeys,
  describeWithRedis,
  freshRedisPrefix,
  listRedisKeys,
  redisUrl,
} from '../helpers/redis.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const jsonAnswer: CachedAnswer = {
  kind: 'json',
  body: {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1770000000,
    model: 'gpt-4o-mini',
    choices: [
      { index: 0, message: { role: 'assistant', content: 'Blue ✓', refusal: null }, finish_reason: 'stop' },
    ],
    usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
  },
  storedAt: 1770000000123,
};

const streamAnswer: CachedAnswer = {
  kind: 'stream',
  chunks: [
    '{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Bl"}}]}',
    '{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"ue"},"finish_reason":"stop"}]}',
  ],
  storedAt: 1770000000456,
};

function responseCacheContract(make: () => { cache: ResponseCache; close(): Promise<void> }): void {
  let cache: ResponseCache;
  let close: () => Promise<void>;
  let n = 0;
  const key = () => `k${++n}`.padEnd(64, '0');

  beforeAll(() => {
    ({ cache, close } = make());
  });
  afterAll(async () => {
    await close();
  });

  it('misses an unknown key', async () => {
    expect(await cache.get(key())).toBeUndefined();
  });

  it('round-trips a JSON answer and a stream answer', async () => {
    const [a, b] = [key(), key()];
    await cache.set(a, jsonAnswer, 10_000);
    await cache.set(b, streamAnswer, 10_000);
    expect(await cache.get(a)).toEqual(jsonAnswer);
    expect(await cache.get(b)).toEqual(streamAnswer);
  });

  it('returns copies: changing a hit does not change the cache', async () => {
    const k = key();
    await cache.set(k, jsonAnswer, 10_000);
    const hit = (await cache.get(k)) as { body: { id: string } };
    hit.body.id = 'changed';
    expect(await cache.get(k)).toEqual(jsonAnswer);
  });

  it('replaces an answer stored under the same key', async () => {
    const k = key();
    await cache.set(k, jsonAnswer, 10_000);
    await cache.set(k, streamAnswer, 10_000);
    expect(await cache.get(k)).toEqual(streamAnswer);
  });

  it('expires an answer after its max age', async () => {
    const k = key();
    await cache.set(k, jsonAnswer, 80);
    expect(await cache.get(k)).toEqual(jsonAnswer);
    await sleep(140);
    expect(await cache.get(k)).toBeUndefined();
  });

  it('stores nothing for a max age of 0', async () => {
    const k = key();
    await cache.set(k, jsonAnswer, 0);
    expect(await cache.get(k)).toBeUndefined();
  });
}

describe('ResponseCache contract: memory LRU', () => {
  responseCacheContract(() => ({ cache: new MemoryResponseCache(), close: async () => undefined }));
});

describe('ResponseCache contract: shared state in memory', () => {
  responseCacheContract(() => {
    const state = new MemoryState();
    return { cache: new SharedResponseCache(state), close: () => state.close() };
  });
});

describeWithRedis('ResponseCache contract: shared state in Redis', () => {
  const prefix = freshRedisPrefix('cache');
  afterAll(async () => {
    await deleteRedisKeys(prefix);
  });
  responseCacheContract(() => {
    const state = new RedisState({ url: redisUrl(), prefix });
    return { cache: new SharedResponseCache(state), close: () => state.close() };
  });
});

describe('MemoryResponseCache: bounded in bytes', () => {
  /** An answer whose stored size is close to `bytes`. */
  function answerOf(bytes: number): CachedAnswer {
    return { kind: 'json', body: 'x'.repeat(bytes - 50), storedAt: 1 };
  }

  it('evicts the least recently used entries to stay within its bytes', async () => {
    const cache = new MemoryResponseCache({ maxBytes: 10_000, maxEntryFraction: 0.5 });
    await cache.set('a', answerOf(3000), 60_000);
    await cache.set('b', answerOf(3000), 60_000);
    await cache.set('c', answerOf(3000), 60_000);
    expect(cache.size).toBe(3);
    expect(await cache.get('a')).toBeDefined(); // a is now the most recently used
    await cache.set('d', answerOf(3000), 60_000); // no room for 4 × 3000: b goes
    expect(await cache.get('b')).toBeUndefined();
    expect(await cache.get('a')).toBeDefined();
    expect(await cache.get('c')).toBeDefined();
    expect(await cache.get('d')).toBeDefined();
    expect(cache.bytes).toBeLessThanOrEqual(10_000);
  });

  it('counts bytes, not characters', async () => {
    const cache = new MemoryResponseCache({ maxBytes: 10_000, maxEntryFraction: 1 });
    await cache.set('ascii', { kind: 'json', body: 'a'.repeat(1000), storedAt: 1 }, 60_000);
    const ascii = cache.bytes;
    await cache.set('wide', { kind: 'json', body: '€'.repeat(1000), storedAt: 1 }, 60_000);
    expect(cache.bytes - ascii).toBeGreaterThan(ascii * 2.5); // '€' is 3 bytes in UTF-8
  });

  it('does not store an entry larger than its fraction of the bound, and drops the older one', async () => {
    const cache = new MemoryResponseCache({ maxBytes: 10_000, maxEntryFraction: 0.25 });
    expect(cache.maxEntryBytes).toBe(2500);
    await cache.set('small', answerOf(1000), 60_000);
    await cache.set('big', answerOf(2000), 60_000);
    await cache.set('big', answerOf(3000), 60_000);
    expect(await cache.get('big')).toBeUndefined();
    expect(await cache.get('small')).toBeDefined();
  });

  it('expires by max age on its clock', async () => {
    let now = 1_000_000;
    const cache = new MemoryResponseCache({ now: () => now });
    await cache.set('k', jsonAnswer, maxAgeMs({ mode: 'simple', max_age: 60 } as { max_age: number }));
    now += 59_000;
    expect(await cache.get('k')).toEqual(jsonAnswer);
    now += 2_000;
    expect(await cache.get('k')).toBeUndefined();
  });

  it('refuses nonsense bounds', () => {
    expect(() => new MemoryResponseCache({ maxBytes: 0 })).toThrow(RangeError);
    expect(() => new MemoryResponseCache({ maxEntryFraction: 0 })).toThrow(RangeError);
    expect(() => new MemoryResponseCache({ maxEntryFraction: 2 })).toThrow(RangeError);
  });
});

describe('max age and age', () => {
  it('defaults to one day; max_age is in seconds', () => {
    expect(DEFAULT_MAX_AGE_SECONDS).toBe(86_400);
    expect(maxAgeMs(undefined)).toBe(86_400_000);
    expect(maxAgeMs({})).toBe(86_400_000);
    expect(maxAgeMs({ max_age: 30 })).toBe(30_000);
    expect(maxAgeMs({ max_age: 0 })).toBe(0);
  });

  it('ageSeconds counts whole seconds since storing', () => {
    expect(ageSeconds({ ...jsonAnswer, storedAt: 10_000 }, 10_999)).toBe(0);
    expect(ageSeconds({ ...jsonAnswer, storedAt: 10_000 }, 72_500)).toBe(62);
    expect(ageSeconds({ ...jsonAnswer, storedAt: 10_000 }, 5_000)).toBe(0);
  });
});

describe('SharedResponseCache specifics', () => {
  it('treats a corrupt or foreign value as a miss and removes it', async () => {
    const state = new MemoryState();
    const cache = new SharedResponseCache(state);
    for (const junk of [
      'not json',
      '{"kind":"json"}',
      '{"kind":"stream","chunks":[1],"storedAt":1}',
      'null',
    ]) {
      await state.set('cache:k', junk);
      expect(await cache.get('k')).toBeUndefined();
      expect(await state.get('cache:k')).toBeUndefined();
    }
    await state.close();
  });

  it('does not store an entry over its byte limit, and drops the older one', async () => {
    const state = new MemoryState();
    const cache = new SharedResponseCache(state, { maxEntryBytes: 1000 });
    await cache.set('k', { kind: 'json', body: 'small', storedAt: 1 }, 60_000);
    await cache.set('k', { kind: 'json', body: 'x'.repeat(2000), storedAt: 1 }, 60_000);
    expect(await cache.get('k')).toBeUndefined();
    await state.close();
  });

  it('createResponseCache picks memory without Redis', async () => {
    const state = new MemoryState();
    expect(createResponseCache({ state })).toBeInstanceOf(MemoryResponseCache);
    expect(createResponseCache()).toBeInstanceOf(MemoryResponseCache);
    await state.close();
  });
});

describeWithRedis('SharedResponseCache on Redis', () => {
  const prefix = freshRedisPrefix('cache-redis');
  let state: SharedState;
  let other: SharedState;

  beforeAll(() => {
    state = new RedisState({ url: redisUrl(), prefix });
    other = new RedisState({ url: redisUrl(), prefix });
  });
  afterAll(async () => {
    await Promise.all([state.close(), other.close()]);
    await deleteRedisKeys(prefix);
  });

  it('stores under the cache prefix with the max age as the Redis TTL', async () => {
    const cache = createResponseCache({ state });
    expect(cache).toBeInstanceOf(SharedResponseCache);
    await cache.set('abc', jsonAnswer, 30_000);
    expect(await listRedisKeys(prefix)).toEqual([`${prefix}cache:abc`]);
    const ttl = await state.ttl('cache:abc');
    expect(ttl).toBeGreaterThan(29_000);
    expect(ttl).toBeLessThanOrEqual(30_000);
  });

  it('keeps an answer whose max_age is past what Redis holds, for a hundred years', async () => {
    const cache = createResponseCache({ state });
    await cache.set('huge', jsonAnswer, maxAgeMs({ max_age: 1e17 }));
    expect(await cache.get('huge')).toEqual(jsonAnswer);
  });

  it('an answer stored by one node is a hit on another', async () => {
    await createResponseCache({ state }).set('shared', streamAnswer, 30_000);
    expect(await createResponseCache({ state: other }).get('shared')).toEqual(streamAnswer);
  });
});
