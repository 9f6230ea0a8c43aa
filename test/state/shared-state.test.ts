/**
 * The SharedState contract, run against the in-process memory implementation and the real Redis.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemoryState } from '../../src/state/memory-state.js';
import { RedisState } from '../../src/state/redis-state.js';
import { createSharedState, type SharedState } from '../../src/state/index.js';
import {
  deleteRedisKeys,
  describeWithRedis,
  freshRedisPrefix,
  listRedisKeys,
  redisUrl,
} from '../helpers/redis.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Fixture {
  make(): SharedState;
}

function sharedStateContract(fixture: Fixture): void {
  let state: SharedState;
  let n = 0;
  /** A key unique to the test, so tests never see each other's values. */
  const key = (name: string) => `${name}:${++n}`;

  beforeAll(() => {
    state = fixture.make();
  });
  afterAll(async () => {
    await state.close();
  });

  it('get of a missing key is undefined', async () => {
    expect(await state.get(key('missing'))).toBeUndefined();
    expect(await state.getBuffer(key('missing'))).toBeUndefined();
  });

  it('set then get; set overwrites', async () => {
    const k = key('kv');
    await state.set(k, 'one');
    expect(await state.get(k)).toBe('one');
    await state.set(k, 'two ünïcødé');
    expect(await state.get(k)).toBe('two ünïcødé');
  });

  it('set with a ttl expires', async () => {
    const k = key('ttl');
    await state.set(k, 'v', 60);
    expect(await state.get(k)).toBe('v');
    const left = await state.ttl(k);
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(60);
    await sleep(120);
    expect(await state.get(k)).toBeUndefined();
    expect(await state.ttl(k)).toBeUndefined();
  });

  it('set without a ttl removes an earlier ttl', async () => {
    const k = key('persist');
    await state.set(k, 'a', 60);
    await state.set(k, 'b');
    expect(await state.ttl(k)).toBeUndefined();
    await sleep(100);
    expect(await state.get(k)).toBe('b');
  });

  it('del removes; deleting a missing key is fine', async () => {
    const k = key('del');
    await state.set(k, 'v');
    await state.del(k);
    expect(await state.get(k)).toBeUndefined();
    await expect(state.del(k)).resolves.toBeUndefined();
  });

  it('deletePrefixed deletes the keys under a prefix, glob characters in it taken literally', async () => {
    const base = key('prefixed');
    await state.set(`${base}:a`, '1');
    await state.set(`${base}:b`, '2', 60_000);
    await state.setBuffer(`${base}:c`, Buffer.from('3'));
    await state.set(`${base}-other`, 'kept');
    await state.set(`${base}*:x`, 'kept too');
    expect(await state.deletePrefixed(`${base}:`)).toBe(3);
    for (const name of ['a', 'b', 'c']) expect(await state.get(`${base}:${name}`)).toBeUndefined();
    expect(await state.get(`${base}-other`)).toBe('kept');
    expect(await state.deletePrefixed(`${base}*`)).toBe(1);
    expect(await state.get(`${base}-other`)).toBe('kept');
    expect(await state.deletePrefixed(`${base}:`)).toBe(0);
  });

  it('setIfAbsent stores only when empty, and again after expiry', async () => {
    const k = key('nx');
    expect(await state.setIfAbsent(k, 'first', 80)).toBe(true);
    expect(await state.setIfAbsent(k, 'second', 80)).toBe(false);
    expect(await state.get(k)).toBe('first');
    await sleep(140);
    expect(await state.setIfAbsent(k, 'third', 80)).toBe(true);
    expect(await state.get(k)).toBe('third');
    const forever = key('nx-forever');
    expect(await state.setIfAbsent(forever, 'x')).toBe(true);
    expect(await state.ttl(forever)).toBeUndefined();
  });

  it('setIfAbsent: exactly one of many concurrent callers wins', async () => {
    const k = key('nx-race');
    const results = await Promise.all(
      Array.from({ length: 25 }, (_, i) => state.setIfAbsent(k, `c${i}`, 5000)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await state.get(k)).toBe(`c${results.indexOf(true)}`);
  });

  it('deleteIfEquals deletes only the expected value', async () => {
    const k = key('cad');
    await state.set(k, 'mine');
    expect(await state.deleteIfEquals(k, 'theirs')).toBe(false);
    expect(await state.get(k)).toBe('mine');
    expect(await state.deleteIfEquals(k, 'mine')).toBe(true);
    expect(await state.get(k)).toBeUndefined();
    expect(await state.deleteIfEquals(k, 'mine')).toBe(false);
  });

  it('incr counts from 1; incrBy adds any integer', async () => {
    const k = key('incr');
    expect(await state.incr(k)).toBe(1);
    expect(await state.incr(k)).toBe(2);
    expect(await state.incrBy(k, 40)).toBe(42);
    expect(await state.incrBy(k, -50)).toBe(-8);
    expect(await state.get(k)).toBe('-8');
    expect(await state.incrBy(key('incrby'), 1000)).toBe(1000);
  });

  it('incr sets the ttl when it creates the key, and never extends it', async () => {
    const k = key('window');
    expect(await state.incr(k, 150)).toBe(1);
    await sleep(80);
    expect(await state.incr(k, 150)).toBe(2);
    expect(await state.ttl(k)).toBeLessThanOrEqual(75);
    await sleep(110);
    expect(await state.get(k)).toBeUndefined();
    expect(await state.incr(k, 150)).toBe(1);
  });

  it('incr keeps the ttl of a key made by set', async () => {
    const k = key('set-then-incr');
    await state.set(k, '5', 100);
    expect(await state.incr(k)).toBe(6);
    expect(await state.ttl(k)).toBeGreaterThan(0);
    await sleep(150);
    expect(await state.get(k)).toBeUndefined();
  });

  it('incr is atomic under concurrency', async () => {
    const k = key('incr-race');
    const values = await Promise.all(Array.from({ length: 50 }, () => state.incr(k, 5000)));
    expect([...values].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(await state.get(k)).toBe('50');
  });

  it('incr of a value that is not an integer fails', async () => {
    const k = key('not-int');
    await state.set(k, 'abc');
    await expect(state.incr(k)).rejects.toThrow();
    expect(await state.get(k)).toBe('abc');
    await expect(state.incrBy(key('fraction'), 1.5)).rejects.toThrow(RangeError);
  });

  it('ttl of a missing key or one without expiry is undefined', async () => {
    expect(await state.ttl(key('none'))).toBeUndefined();
    const k = key('no-expiry');
    await state.set(k, 'v');
    expect(await state.ttl(k)).toBeUndefined();
  });

  it('refuses a ttl that is not a positive number', async () => {
    for (const bad of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(state.set(key('bad-ttl'), 'v', bad)).rejects.toThrow(RangeError);
      await expect(state.incr(key('bad-ttl'), bad)).rejects.toThrow(RangeError);
      await expect(state.setIfAbsent(key('bad-ttl'), 'v', bad)).rejects.toThrow(RangeError);
    }
  });

  it('a fractional ttl rounds up', async () => {
    const k = key('fraction-ttl');
    await state.set(k, 'v', 1000.2);
    const left = await state.ttl(k);
    expect(Number.isInteger(left)).toBe(true);
    expect(left).toBeGreaterThan(900);
    expect(left).toBeLessThanOrEqual(1001);
    await state.set(k, 'v', 0.2); // rounds up to 1 ms rather than being refused as 0
    await sleep(5);
    expect(await state.get(k)).toBeUndefined();
  });

  it('buffers round-trip byte for byte, including bytes that are not UTF-8', async () => {
    const k = key('buf');
    const bytes = Buffer.from([0, 255, 254, 0x80, 0xc3, 0x28, 10, 13]);
    await state.setBuffer(k, bytes, 5000);
    const back = await state.getBuffer(k);
    expect(back).toBeInstanceOf(Buffer);
    expect(back!.equals(bytes)).toBe(true);
    bytes[0] = 7;
    back![1] = 7;
    expect((await state.getBuffer(k))!.equals(Buffer.from([0, 255, 254, 0x80, 0xc3, 0x28, 10, 13]))).toBe(
      true,
    );
  });

  it('a string is readable as a buffer and a UTF-8 buffer as a string', async () => {
    const k = key('mixed');
    await state.set(k, 'héllo');
    expect((await state.getBuffer(k))!.toString('utf8')).toBe('héllo');
    await state.setBuffer(k, Buffer.from('wörld', 'utf8'));
    expect(await state.get(k)).toBe('wörld');
  });

  it('a buffer with a ttl expires', async () => {
    const k = key('buf-ttl');
    await state.setBuffer(k, Buffer.from('x'), 50);
    await sleep(100);
    expect(await state.getBuffer(k)).toBeUndefined();
  });
}

describe('SharedState contract: memory', () => {
  sharedStateContract({ make: () => new MemoryState() });
});

describeWithRedis('SharedState contract: Redis', () => {
  const prefix = freshRedisPrefix('state');
  afterAll(async () => {
    await deleteRedisKeys(prefix);
  });
  sharedStateContract({ make: () => new RedisState({ url: redisUrl(), prefix }) });
});

describe('MemoryState specifics', () => {
  it('is bounded: the oldest written keys go first, expired keys before live ones', async () => {
    let now = 1_000;
    const state = new MemoryState({ maxKeys: 3, now: () => now });
    await state.set('a', '1');
    await state.set('b', '2', 10);
    await state.set('c', '3');
    now += 20; // b has expired
    await state.set('d', '4');
    expect(await state.get('a')).toBe('1');
    expect(await state.get('c')).toBe('3');
    expect(state.size).toBe(3);
    await state.set('a', 'rewritten'); // a becomes the youngest
    await state.set('e', '5'); // evicts c, the oldest write
    expect(await state.get('c')).toBeUndefined();
    expect(await state.get('a')).toBe('rewritten');
    expect(await state.get('d')).toBe('4');
    expect(await state.get('e')).toBe('5');
    expect(state.size).toBe(3);
    await state.close();
  });

  it('fails after close', async () => {
    const state = new MemoryState();
    await state.set('k', 'v');
    await state.close();
    await expect(state.get('k')).rejects.toThrow(/closed/);
  });

  it('createSharedState without a Redis URL is memory', async () => {
    const state = await createSharedState({});
    expect(state.kind).toBe('memory');
    await state.close();
  });
});

describeWithRedis('RedisState specifics', () => {
  const prefix = freshRedisPrefix('state-iso');
  let a: SharedState;
  let b: SharedState;
  let sameAsA: SharedState;

  beforeAll(async () => {
    a = await createSharedState({ redisUrl: redisUrl(), prefix: `${prefix}a:` });
    b = await createSharedState({ redisUrl: redisUrl(), prefix: `${prefix}b:` });
    sameAsA = await createSharedState({ redisUrl: redisUrl(), prefix: `${prefix}a:` });
  });
  afterEach(async () => {
    await deleteRedisKeys(prefix);
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close(), sameAsA.close()]);
    await deleteRedisKeys(prefix);
  });

  it('createSharedState with a URL is Redis', () => {
    expect(a.kind).toBe('redis');
  });

  it('stores every key under its prefix, and prefixes do not see each other', async () => {
    await a.set('shared-name', 'from a');
    await a.incr('counter', 10_000);
    await b.set('shared-name', 'from b');
    expect(await a.get('shared-name')).toBe('from a');
    expect(await b.get('shared-name')).toBe('from b');
    expect((await listRedisKeys(prefix)).sort()).toEqual(
      [`${prefix}a:counter`, `${prefix}a:shared-name`, `${prefix}b:shared-name`].sort(),
    );
  });

  it('two clients on one prefix are two nodes sharing state', async () => {
    await a.set('k', 'v');
    expect(await sameAsA.get('k')).toBe('v');
    const counts = await Promise.all([a.incr('n'), sameAsA.incr('n'), a.incr('n'), sameAsA.incr('n')]);
    expect(counts.sort()).toEqual([1, 2, 3, 4]);
    const wins = await Promise.all([
      a.setIfAbsent('lock', 'a', 5000),
      sameAsA.setIfAbsent('lock', 'b', 5000),
    ]);
    expect(wins.filter(Boolean)).toHaveLength(1);
  });

  it('fails after close', async () => {
    const state = await createSharedState({ redisUrl: redisUrl(), prefix: `${prefix}closed:` });
    await state.set('k', 'v');
    await state.close();
    await expect(state.get('k')).rejects.toThrow();
  });
});
