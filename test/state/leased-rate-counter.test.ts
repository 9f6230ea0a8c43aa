/**
 * Leases on Redis rate counters (state/leased-rate-counter.ts) against the real Redis: a busy counter with
 * room is charged in leases, not a script per call; unused units go back; two nodes together still admit
 * exactly the limit; a refused call's leased units are put back. The counters' time is handed in and
 * stands still, so only the calls move the counters (per day, so that keys do not expire in real time).
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { LeasedRateCounter, type LeaseOptions } from '../../src/state/leased-rate-counter.js';
import { RedisRateCounter } from '../../src/state/redis-rate-counter.js';
import { RedisState } from '../../src/state/redis-state.js';
import type { RateTake } from '../../src/state/rate-counter.js';
import { deleteRedisKeys, describeWithRedis, freshRedisPrefix, redisUrl } from '../helpers/redis.js';

/** A day: a key's expiry (real time, while the counters' time stands still) is then seconds per unit. */
const DAY = 86_400_000;
const T0 = Date.UTC(2030, 0, 1);
/** Long enough that no sweep runs during a test that does not ask for one. */
const NO_SWEEP = 60_000;

describeWithRedis('rate counters in Redis with leases', () => {
  const prefix = freshRedisPrefix('leased-rate-counter');
  const states: RedisState[] = [];
  const counters: LeasedRateCounter[] = [];
  let n = 0;
  const key = (name: string) => `rl:test:${name}:${++n}`;
  const requests = (k: string, limit: number): RateTake => ({
    key: k,
    periodMs: DAY,
    limit,
    need: 1,
    cost: 1,
  });

  afterAll(async () => {
    for (const counter of counters) await counter.close();
    for (const state of states) await state.close();
    await deleteRedisKeys(prefix);
  });

  /** A node: its own connection, made first as a node's start makes it, its scripts counted. */
  async function node(options: LeaseOptions = {}) {
    const state = new RedisState({ url: redisUrl(), prefix });
    states.push(state);
    await state.firstConnection();
    const scripts = vi.spyOn(state, 'runScript');
    const counter = new LeasedRateCounter(new RedisRateCounter(state), { clock: () => T0, ...options });
    counters.push(counter);
    return { state, scripts, counter };
  }

  /** The units a counter holds in Redis (`<level>,<at>`). */
  async function levelIn(state: RedisState, k: string): Promise<number> {
    const stored = await state.get(k);
    return stored === undefined ? 0 : Number(stored.split(',')[0]);
  }

  /** Calls one by one until the node holds leased units (Redis holds more than the calls); how many. */
  async function callUntilLeaseHeld(
    { state, counter }: { state: RedisState; counter: LeasedRateCounter },
    take: RateTake,
  ): Promise<number> {
    for (let calls = 1; calls <= 100; calls++) {
      expect((await counter.take([take], T0)).admitted).toBe(true);
      if ((await levelIn(state, take.key)) > calls) return calls;
    }
    throw new Error('no lease was taken in 100 calls');
  }

  it('admits N calls of a roomy counter with far fewer than N scripts, counting down one by one', async () => {
    const { scripts, counter } = await node({ lifetimeMs: NO_SWEEP });
    const k = key('roomy');
    const limit = 10_000;
    const remaining: number[] = [];
    for (let i = 0; i < 500; i++) {
      const result = await counter.take([requests(k, limit)], T0);
      expect(result.admitted).toBe(true);
      remaining.push(result.readings[0].remaining);
    }
    expect(remaining).toEqual(Array.from({ length: 500 }, (_, i) => limit - 1 - i));
    expect(scripts.mock.calls.length).toBeLessThan(50);
  });

  it('the script grants leases only below half the limit, and admits the call whatever its lease', async () => {
    const { state } = await node();
    const redis = new RedisRateCounter(state);
    const k = key('grants');
    const first = await redis.take([requests(k, 100)], T0, undefined, [80]);
    expect(first).toMatchObject({ admitted: true, leased: [49] });
    expect(await levelIn(state, k)).toBe(50);
    const second = await redis.take([requests(k, 100)], T0, undefined, [10]);
    expect(second).toMatchObject({ admitted: true, leased: [0] });
    expect(second.readings[0].remaining).toBe(49);
    expect(await levelIn(state, k)).toBe(51);
  });

  it('a small limit is never leased: one script per call', async () => {
    const { scripts, counter } = await node({ lifetimeMs: NO_SWEEP });
    const k = key('small');
    for (let i = 0; i < 10; i++) expect((await counter.take([requests(k, 63)], T0)).admitted).toBe(true);
    expect(scripts).toHaveBeenCalledTimes(10);
  });

  it('unused leased units go back to Redis after the lifetime, and at close', async () => {
    const swept = await node({ lifetimeMs: 20 });
    const closed = await node({ lifetimeMs: NO_SWEEP });
    for (const at of [swept, closed]) {
      const k = key('returned');
      // Leases are charged beyond the calls made…
      const calls = await callUntilLeaseHeld(at, requests(k, 10_000));
      if (at === closed) await at.counter.close();
      // …and what was not used comes back.
      await vi.waitFor(async () => expect(await levelIn(at.state, k)).toBe(calls), { timeout: 2_000 });
    }
  });

  it('two nodes with leases together admit exactly the limit of a burst', async () => {
    const a = await node({ lifetimeMs: NO_SWEEP });
    const b = await node({ lifetimeMs: NO_SWEEP });
    const k = key('two-nodes');
    const limit = 1_000;
    let admitted = 0;
    let calls = 0;
    // Waves of concurrent calls on both nodes, until well past the limit.
    for (let wave = 0; wave < 30; wave++) {
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => (i % 2 ? b : a).counter.take([requests(k, limit)], T0)),
      );
      calls += results.length;
      admitted += results.filter((result) => result.admitted).length;
    }
    expect(admitted).toBe(limit);
    expect(await levelIn(a.state, k)).toBe(limit);
    // The leases did their work below half the limit.
    expect(a.scripts.mock.calls.length + b.scripts.mock.calls.length).toBeLessThan(calls - 100);
  });

  it('a lowered limit applies at once to a node holding leased units: they go back, and Redis decides', async () => {
    const at = await node({ lifetimeMs: NO_SWEEP });
    const other = await node({ lifetimeMs: NO_SWEEP });
    const { state, counter } = at;
    const k = key('lowered');
    const calls = await callUntilLeaseHeld(at, requests(k, 6_400));
    // Other nodes use 200 units more: past a limit of 100.
    await new RedisRateCounter(other.state).adjust([{ key: k, periodMs: DAY, limit: 6_400, units: 200 }], T0);
    // The policy's value goes down to 100 (still leasable): the counter is over it, so the call is refused…
    const refused = await counter.take([requests(k, 100)], T0);
    expect(refused.admitted).toBe(false);
    expect(refused.readings[0].remaining).toBe(0);
    // …and the units leased under the old limit are back in Redis, which holds what was used.
    expect(await levelIn(state, k)).toBe(calls + 200);

    // A lease asked for under the old limit and answered once the limit went down (by calls that did not
    // wait for it: it had no spots left for them) goes back too, and the calls waiting for it are decided by
    // Redis.
    const late = key('lowered-in-flight');
    expect((await counter.take([requests(late, 6_400)], T0)).admitted).toBe(true);
    await new RedisRateCounter(other.state).adjust(
      [{ key: late, periodMs: DAY, limit: 6_400, units: 200 }],
      T0,
    );
    const [leasing, ...lowered] = await Promise.all([
      counter.take([requests(late, 6_400)], T0),
      ...Array.from({ length: 6 }, () => counter.take([requests(late, 100)], T0)),
    ]);
    expect(leasing.admitted).toBe(true);
    expect(lowered.map((result) => result.admitted)).toEqual(lowered.map(() => false));
    expect(await levelIn(state, late)).toBe(202);
  });

  it('a call refused by Redis puts the units it took from a lease back', async () => {
    const at = await node({ lifetimeMs: NO_SWEEP });
    const { state, scripts, counter } = at;
    const roomy = requests(key('lease-held'), 6_400);
    const full = requests(key('full'), 1);
    const calls = await callUntilLeaseHeld(at, roomy);
    expect((await counter.take([full], T0)).admitted).toBe(true);
    // The roomy counter's unit comes from the lease in hand: only the full counter goes to Redis…
    const before = scripts.mock.calls.length;
    const refused = await counter.take([roomy, full], T0);
    expect(refused).toMatchObject({ admitted: false, refused: [1] });
    expect(refused.readings[0].remaining).toBe(6_400 - calls);
    expect(scripts.mock.calls.length).toBe(before + 1);
    // …and refused, the unit went back: the next call counts the same unit again, from the lease.
    const next = await counter.take([roomy], T0);
    expect(next.readings[0].remaining).toBe(6_400 - calls - 1);
    expect(scripts.mock.calls.length).toBe(before + 1);
    // Once the lease is given back, Redis holds exactly the admitted calls.
    await counter.close();
    expect(await levelIn(state, roomy.key)).toBe(calls + 1);
  });
});

describe('leases and counters without Redis', () => {
  it('is not used for memory counters', async () => {
    const { createRateCounter, MemoryState } = await import('../../src/state/index.js');
    expect(createRateCounter(new MemoryState()).constructor.name).toBe('MemoryRateCounter');
  });
});
