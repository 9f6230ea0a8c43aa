/**
 * The circuit breaker over both SharedState implementations, with short cooldowns.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBreaker, type Breaker, type BreakerConfig } from '../../src/state/breaker.js';
import { MemoryState } from '../../src/state/memory-state.js';
import { RedisState } from '../../src/state/redis-state.js';
import type { SharedState } from '../../src/state/types.js';
import { deleteRedisKeys, describeWithRedis, freshRedisPrefix, redisUrl } from '../helpers/redis.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Checks that the circuit is still open are made a quarter of the way into a cooldown: the rest is
 * slack for a loaded machine, where a timer or a Redis reply can come hundreds of milliseconds late (at
 * 120 ms with checks half way, a slow moment made the circuit look half-open too early). Checks that
 * it reopened wait a full cooldown and more, which lateness only makes surer. */
const COOLDOWN = 400;
const cfg: BreakerConfig = { failure_threshold: 3, cooldown_interval: COOLDOWN };

function breakerContract(make: () => SharedState[]): void {
  let states: SharedState[];
  let breaker: Breaker;
  let n = 0;
  const target = () => `target-${++n}`;

  beforeAll(() => {
    states = make();
    breaker = createBreaker(states[0]);
  });
  afterAll(async () => {
    await Promise.all(states.map((s) => s.close()));
  });

  /** The state a caller is given now. */
  const stateOf = async (key: string, config = cfg, b = breaker) => (await b.canPass(key, config)).state;
  /** A call let through now that fails (or succeeds). */
  async function fail(key: string, config = cfg, b = breaker): Promise<void> {
    await b.recordFailure(key, config, await b.canPass(key, config));
  }
  async function succeed(key: string, b = breaker): Promise<void> {
    await b.recordSuccess(key, await b.canPass(key, cfg));
  }

  async function trip(key: string, config = cfg): Promise<void> {
    for (let i = 0; i < config.failure_threshold; i++) await fail(key, config);
    expect(await stateOf(key, config)).toBe('open');
  }

  it('starts closed and stays closed below the threshold', async () => {
    const key = target();
    expect(await stateOf(key)).toBe('closed');
    await fail(key);
    await fail(key);
    expect(await stateOf(key)).toBe('closed');
  });

  it('opens after failure_threshold consecutive failures', async () => {
    const key = target();
    await fail(key);
    await fail(key);
    await fail(key);
    expect(await stateOf(key)).toBe('open');
  });

  it('a success resets the count: failures must be consecutive', async () => {
    const key = target();
    await fail(key);
    await fail(key);
    await succeed(key);
    await fail(key);
    await fail(key);
    expect(await stateOf(key)).toBe('closed');
    await fail(key);
    expect(await stateOf(key)).toBe('open');
  });

  it('a threshold of 1 opens on the first failure', async () => {
    const key = target();
    await fail(key, { failure_threshold: 1, cooldown_interval: COOLDOWN });
    expect(await stateOf(key)).toBe('open');
  });

  it('after the cooldown exactly one caller gets the probe; the others still see open', async () => {
    const key = target();
    await trip(key);
    await sleep(COOLDOWN + 40);
    const answers = await Promise.all(Array.from({ length: 12 }, () => stateOf(key)));
    expect(answers.filter((a) => a === 'probe')).toHaveLength(1);
    expect(answers.filter((a) => a === 'open')).toHaveLength(11);
    expect(await stateOf(key)).toBe('open');
  });

  it('a probe success closes the circuit and starts the count afresh', async () => {
    const key = target();
    await trip(key);
    await sleep(COOLDOWN + 40);
    const probe = await breaker.canPass(key, cfg);
    expect(probe.state).toBe('probe');
    await breaker.recordSuccess(key, probe);
    expect(await stateOf(key)).toBe('closed');
    expect(await stateOf(key)).toBe('closed');
    await fail(key);
    await fail(key);
    expect(await stateOf(key)).toBe('closed');
  });

  it('a probe failure re-opens for another full cooldown', async () => {
    const key = target();
    await trip(key);
    await sleep(COOLDOWN + 40);
    const probe = await breaker.canPass(key, cfg);
    expect(probe.state).toBe('probe');
    await breaker.recordFailure(key, cfg, probe);
    expect(await stateOf(key)).toBe('open');
    await sleep(COOLDOWN / 4);
    expect(await stateOf(key)).toBe('open');
    await sleep((COOLDOWN * 3) / 4 + 40);
    expect(await stateOf(key)).toBe('probe');
  });

  it('late results of calls sent before opening neither close nor extend the cooldown', async () => {
    const key = target();
    const early = await Promise.all([breaker.canPass(key, cfg), breaker.canPass(key, cfg)]);
    await trip(key);
    await sleep(COOLDOWN / 4);
    await breaker.recordSuccess(key, early[0]);
    expect(await stateOf(key)).toBe('open');
    await breaker.recordFailure(key, cfg, early[1]);
    await sleep((COOLDOWN * 3) / 4 + 40);
    expect(await stateOf(key)).toBe('probe');
  });

  it('only the probe decides a half-open circuit: late results of calls sent before opening do not', async () => {
    const key = target();
    const early = await Promise.all([breaker.canPass(key, cfg), breaker.canPass(key, cfg)]);
    await trip(key);
    await sleep(COOLDOWN + 40);
    const probe = await breaker.canPass(key, cfg);
    expect(probe.state).toBe('probe');
    await breaker.recordSuccess(key, early[0]);
    expect(await stateOf(key)).toBe('open');
    await breaker.recordFailure(key, cfg, early[1]);
    await breaker.recordSuccess(key, probe);
    expect(await stateOf(key)).toBe('closed');
  });

  it('a call of a circuit since tripped and closed again counts for nothing', async () => {
    const key = target();
    const early = await breaker.canPass(key, cfg);
    await trip(key);
    await sleep(COOLDOWN + 40);
    await breaker.recordSuccess(key, await breaker.canPass(key, cfg));
    await fail(key);
    await fail(key);
    await breaker.recordFailure(key, cfg, early);
    expect(await stateOf(key)).toBe('closed');
  });

  it('a probe that never reports is replaced after its lease (one cooldown)', async () => {
    const key = target();
    await trip(key);
    await sleep(COOLDOWN + 40);
    expect(await stateOf(key)).toBe('probe');
    expect(await stateOf(key)).toBe('open');
    await sleep(COOLDOWN + 40);
    expect(await stateOf(key)).toBe('probe');
  });

  it('a released probe lets the next caller probe at once, the circuit staying half-open', async () => {
    const key = target();
    await trip(key);
    await sleep(COOLDOWN + 40);
    const probe = await breaker.canPass(key, cfg);
    expect(probe.state).toBe('probe');
    expect(await stateOf(key)).toBe('open');
    await breaker.releaseProbe(key, probe);
    expect(await stateOf(key)).toBe('probe');
    expect(await stateOf(key)).toBe('open');
  });

  it('keys are independent circuits', async () => {
    const broken = target();
    const healthy = target();
    await trip(broken);
    expect(await stateOf(healthy)).toBe('closed');
  });

  it('breakers over the same state are one circuit (as two nodes would be)', async () => {
    const other = createBreaker(states[states.length - 1]);
    const key = target();
    await fail(key);
    await fail(key, cfg, other);
    await fail(key);
    expect(await stateOf(key, cfg, other)).toBe('open');
    await sleep(COOLDOWN + 40);
    const passes = await Promise.all([breaker.canPass(key, cfg), other.canPass(key, cfg)]);
    expect(passes.map((p) => p.state).sort()).toEqual(['open', 'probe']);
    await other.recordSuccess(
      key,
      passes.find((p) => p.state === 'probe')!,
    );
    expect(await stateOf(key)).toBe('closed');
  });
}

describe('circuit breaker: memory', () => {
  breakerContract(() => [new MemoryState()]);
});

describeWithRedis('circuit breaker: Redis', () => {
  const prefix = freshRedisPrefix('breaker');
  afterAll(async () => {
    await deleteRedisKeys(prefix);
  });
  // Two clients on one prefix: the second stands for another gateway node.
  breakerContract(() => [
    new RedisState({ url: redisUrl(), prefix }),
    new RedisState({ url: redisUrl(), prefix }),
  ]);
});
