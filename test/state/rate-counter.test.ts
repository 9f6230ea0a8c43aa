/**
 * The rate counters' contract (state/rate-counter.ts), run against process memory and the real Redis. Time
 * is handed in, so nothing here waits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeasedRateCounter } from '../../src/state/leased-rate-counter.js';
import { MemoryRateCounter } from '../../src/state/memory-rate-counter.js';
import { RedisRateCounter } from '../../src/state/redis-rate-counter.js';
import { RedisState } from '../../src/state/redis-state.js';
import type { RateCounter, RateTake } from '../../src/state/rate-counter.js';
import { deleteRedisKeys, describeWithRedis, freshRedisPrefix, redisUrl } from '../helpers/redis.js';

const MINUTE = 60_000;
const T0 = Date.UTC(2030, 0, 1);

interface Counters {
  counters: RateCounter[];
  close(): Promise<void>;
}

function contract(make: () => Counters | Promise<Counters>): void {
  let counter: RateCounter;
  let counters: RateCounter[];
  let close: () => Promise<void>;
  let n = 0;
  const key = (name: string) => `rl:test:${name}:${++n}`;
  const requests = (k: string, limit: number, periodMs = MINUTE): RateTake => ({
    key: k,
    periodMs,
    limit,
    need: 1,
    cost: 1,
  });

  beforeAll(async () => {
    ({ counters, close } = await make());
    counter = counters[0];
  });
  afterAll(async () => close());

  it('admits `limit` units at once and refuses the next, saying when there is room again', async () => {
    const k = key('burst');
    const remaining: number[] = [];
    for (let i = 0; i < 5; i++) {
      const result = await counter.take([requests(k, 5)], T0);
      expect(result.admitted).toBe(true);
      remaining.push(result.readings[0].remaining);
    }
    expect(remaining).toEqual([4, 3, 2, 1, 0]);
    const refused = await counter.take([requests(k, 5)], T0);
    expect(refused).toMatchObject({ admitted: false, refused: [0] });
    expect(refused.readings[0]).toEqual({ remaining: 0, resetMs: MINUTE, retryAfterMs: 12_000 });
    // Room comes back one unit per interval (60 s / 5), not at the end of a window.
    expect((await counter.take([requests(k, 5)], T0 + 11_999)).admitted).toBe(false);
    expect((await counter.take([requests(k, 5)], T0 + 12_000)).admitted).toBe(true);
    expect((await counter.take([requests(k, 5)], T0 + 12_000)).admitted).toBe(false);
  });

  it('admits exactly `limit` of a concurrent burst, across every client', async () => {
    const k = key('concurrent');
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => counters[i % counters.length].take([requests(k, 17)], T0)),
    );
    expect(results.filter((r) => r.admitted)).toHaveLength(17);
  });

  it('charges several counters all or none', async () => {
    const roomy = key('roomy');
    const full = key('full');
    await counter.take([requests(full, 1)], T0);
    const refused = await counter.take([requests(roomy, 3), requests(full, 1)], T0);
    expect(refused).toMatchObject({ admitted: false, refused: [1] });
    // The counter that had room reads as it stands: this call was charged to it no more than to the other.
    expect(refused.readings[0]).toEqual({ remaining: 3, resetMs: 0, retryAfterMs: 0 });
    // Nothing was charged to the counter that had room.
    expect((await counter.take([requests(roomy, 3)], T0)).readings[0].remaining).toBe(2);
  });

  it('counts hours and days', async () => {
    const hour = key('hour');
    const day = key('day');
    const HOUR = 60 * MINUTE;
    for (const [k, period] of [
      [hour, HOUR],
      [day, 24 * HOUR],
    ] as const) {
      expect((await counter.take([requests(k, 2, period)], T0)).admitted).toBe(true);
      expect((await counter.take([requests(k, 2, period)], T0)).admitted).toBe(true);
      const refused = await counter.take([requests(k, 2, period)], T0);
      expect(refused.readings[0].retryAfterMs).toBe(period / 2);
      expect((await counter.take([requests(k, 2, period)], T0 + period / 2 - 1)).admitted).toBe(false);
      expect((await counter.take([requests(k, 2, period)], T0 + period / 2)).admitted).toBe(true);
    }
  });

  it('tokens: admitted while any room is left, the reservation charged whole, then settled', async () => {
    const k = key('tokens');
    const tokens = (cost: number): RateTake => ({ key: k, periodMs: MINUTE, limit: 1000, need: 1, cost });
    expect((await counter.take([tokens(900)], T0)).readings[0].remaining).toBe(100);
    // 100 left: a reservation of 300 still goes (one call's overshoot), and then nothing does.
    expect((await counter.take([tokens(300)], T0)).admitted).toBe(true);
    expect((await counter.take([tokens(1)], T0)).admitted).toBe(false);
    // The 300 used only 50; the 900 used 1000.
    await counter.adjust([{ key: k, periodMs: MINUTE, limit: 1000, units: -250 }], T0);
    await counter.adjust([{ key: k, periodMs: MINUTE, limit: 1000, units: 100 }], T0);
    expect((await counter.take([tokens(1)], T0)).admitted).toBe(false);
    // 1050 used, draining 1000 a minute: room for one after 3.06 s.
    expect((await counter.take([tokens(1)], T0 + 3_059)).admitted).toBe(false);
    expect((await counter.take([tokens(1)], T0 + 3_060)).admitted).toBe(true);
  });

  it('a reservation of the most a call may reserve on the smallest daily limit is charged, and settled', async () => {
    const k = key('far-past');
    const DAY = 24 * 60 * MINUTE;
    // 10¹² tokens (token-estimate.ts's bound) on a limit of one a day: a bucket that drains in 10¹² days.
    const take = (cost: number): RateTake => ({ key: k, periodMs: DAY, limit: 1, need: 1, cost });
    expect((await counter.take([take(1e12)], T0)).admitted).toBe(true);
    expect((await counter.take([take(1)], T0)).admitted).toBe(false);
    await counter.adjust([{ key: k, periodMs: DAY, limit: 1, units: 1 - 1e12 }], T0);
    expect((await counter.take([take(1)], T0 + DAY)).admitted).toBe(true);
  });

  it('a settlement below zero empties the counter and no further', async () => {
    const k = key('refund');
    await counter.take([{ key: k, periodMs: MINUTE, limit: 10, need: 1, cost: 4 }], T0);
    await counter.adjust([{ key: k, periodMs: MINUTE, limit: 10, units: -100 }], T0);
    expect((await counter.take([requests(k, 10)], T0)).readings[0].remaining).toBe(9);
  });

  it('a raised limit applies at once to what was used', async () => {
    const k = key('raised');
    expect((await counter.take([requests(k, 1)], T0)).admitted).toBe(true);
    expect((await counter.take([requests(k, 1)], T0)).admitted).toBe(false);
    const raised = await counter.take([requests(k, 3)], T0);
    expect(raised.admitted).toBe(true);
    expect(raised.readings[0].remaining).toBe(1);
  });
}

describe('rate counters in memory', () => {
  contract(() => {
    const counter = new MemoryRateCounter();
    return { counters: [counter], close: async () => undefined };
  });
});

function inRedis(name: string, counterOf: (state: RedisState) => RateCounter): void {
  describeWithRedis(name, () => {
    const prefix = freshRedisPrefix('rate-counter');
    const states: RedisState[] = [];
    contract(async () => {
      // Two connections, as two gateway nodes would have, each connected first as a node starts.
      for (let i = 0; i < 2; i++) states.push(new RedisState({ url: redisUrl(), prefix }));
      for (const state of states) await state.firstConnection();
      const counters = states.map(counterOf);
      return {
        counters,
        async close() {
          for (const counter of counters) await counter.close();
          for (const state of states) await state.close();
          await deleteRedisKeys(prefix);
        },
      };
    });
  });
}

inRedis('rate counters in Redis', (state) => new RedisRateCounter(state));
// The contract's limits are below what is ever leased: the leases layer must answer exactly as Redis does.
inRedis(
  'rate counters in Redis, through the leases layer',
  (state) => new LeasedRateCounter(new RedisRateCounter(state), { clock: () => T0 }),
);

describeWithRedis('a take whose answer was lost, in Redis', () => {
  const prefix = freshRedisPrefix('rate-unanswered');
  let state: RedisState;
  let counter: RedisRateCounter;
  const take = (key: string): RateTake => ({ key, periodMs: MINUTE, limit: 1_000, need: 1, cost: 1 });
  const giveBack = (key: string) => [{ key, periodMs: MINUTE, limit: 1_000, units: -1 }];
  // The level to its ninth decimal: a charge's mark is written in the digits past it.
  const level = async (key: string) => {
    const written = (await state.get(key))?.split(',')[0] ?? '0';
    return Number(written.slice(0, written.indexOf('.') + 10));
  };

  beforeAll(async () => {
    state = new RedisState({ url: redisUrl(), prefix });
    await state.firstConnection();
    counter = new RedisRateCounter(state);
  });
  afterAll(async () => {
    await state.close();
    await deleteRedisKeys(prefix);
  });

  it('is given back, with the lease it was granted, once, if Redis ran it', async () => {
    await counter.take([take('rl:ran')], T0, 'node-1:1', [9]);
    expect(await level('rl:ran')).toBe(10);
    expect(await counter.giveBackUnanswered('node-1:1', giveBack('rl:ran'), T0)).toBe(true);
    expect(await level('rl:ran')).toBe(0);
    await counter.take([take('rl:ran')], T0);
    // Given back once: a second give-back of the same charge finds nothing to give.
    expect(await counter.giveBackUnanswered('node-1:1', giveBack('rl:ran'), T0)).toBe(false);
    expect(await level('rl:ran')).toBe(1);
  });

  it('gives back nothing if Redis never ran it, or refused it', async () => {
    await counter.take([take('rl:other')], T0);
    expect(await counter.giveBackUnanswered('node-1:2', giveBack('rl:other'), T0)).toBe(false);
    expect(await level('rl:other')).toBe(1);
    const full = { ...take('rl:full'), limit: 1 };
    await counter.take([full], T0);
    expect((await counter.take([full], T0, 'node-1:3')).admitted).toBe(false);
    expect(await counter.giveBackUnanswered('node-1:3', [{ ...giveBack('rl:full')[0], limit: 1 }], T0)).toBe(
      false,
    );
    expect(await level('rl:full')).toBe(1);
  });

  it('stands once another call charged its counter: the mark went with that write', async () => {
    await counter.take([take('rl:busy')], T0, 'node-1:4');
    await counter.take([take('rl:busy')], T0, 'node-2:1');
    expect(await counter.giveBackUnanswered('node-1:4', giveBack('rl:busy'), T0)).toBe(false);
    expect(await level('rl:busy')).toBe(2);
  });

  it('stands for all but the last of the checks of one counter whose answers were lost together', async () => {
    // A dropped connection takes the answers of every check in flight on it: Redis ran both, and the
    // counter carries the mark of the one it ran last.
    await counter.take([take('rl:burst')], T0, 'node-1:6');
    await counter.take([take('rl:burst')], T0, 'node-1:7');
    expect(await counter.giveBackUnanswered('node-1:6', giveBack('rl:burst'), T0)).toBe(false);
    expect(await counter.giveBackUnanswered('node-1:7', giveBack('rl:burst'), T0)).toBe(true);
    expect(await level('rl:burst')).toBe(1);
  });

  it('stands once a settlement wrote its counter', async () => {
    await counter.take([take('rl:settled')], T0, 'node-1:8');
    await counter.adjust([{ key: 'rl:settled', periodMs: MINUTE, limit: 1_000, units: 0 }], T0);
    expect(await counter.giveBackUnanswered('node-1:8', giveBack('rl:settled'), T0)).toBe(false);
    expect(await level('rl:settled')).toBe(1);
  });

  it('leaves no reading changed by its mark', async () => {
    const marked = await counter.take([take('rl:marked')], T0, 'node-1:5', [9]);
    const unmarked = await counter.take([take('rl:unmarked')], T0, undefined, [9]);
    expect(marked.readings).toEqual(unmarked.readings);
    const next = await counter.take([take('rl:marked')], T0 + 1);
    const nextUnmarked = await counter.take([take('rl:unmarked')], T0 + 1);
    expect(next.readings).toEqual(nextUnmarked.readings);
    expect(await state.get('rl:marked')).toBe(await state.get('rl:unmarked'));
  });
});
