import { describe, expect, it } from 'vitest';
import { pickWeighted, weightsOf } from '../../src/gateway/routing/weighted-pick.js';

/** A small seeded generator (mulberry32), so a run is reproducible. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function share(weights: number[], picks: number, random: () => number): number[] {
  const counts = weights.map(() => 0);
  for (let i = 0; i < picks; i++) counts[pickWeighted(weights, random)] += 1;
  return counts.map((c) => (c / picks) * 100);
}

describe('pickWeighted', () => {
  it('splits 4,000 picks 3:1 within ±3 points of 75/25 (seeded)', () => {
    for (const seed of [1, 42, 2024]) {
      const [a, b] = share([3, 1], 4000, seeded(seed));
      expect(Math.abs(a - 75)).toBeLessThanOrEqual(3);
      expect(Math.abs(b - 25)).toBeLessThanOrEqual(3);
    }
  });

  it('splits 4,000 picks 3:1 within ±3 points of 75/25 (Math.random)', () => {
    const [a, b] = share([3, 1], 4000, Math.random);
    expect(Math.abs(a - 75)).toBeLessThanOrEqual(3);
    expect(Math.abs(b - 25)).toBeLessThanOrEqual(3);
  });

  it('never picks a weight of 0', () => {
    const counts = share([0, 2, 0, 1], 2000, seeded(7));
    expect(counts[0]).toBe(0);
    expect(counts[2]).toBe(0);
    expect(counts[1] + counts[3]).toBeCloseTo(100);
  });

  it('uses the whole range, including the extremes of the random source', () => {
    expect(pickWeighted([3, 1], () => 0)).toBe(0);
    expect(pickWeighted([3, 1], () => 0.7499)).toBe(0);
    expect(pickWeighted([3, 1], () => 0.75)).toBe(1);
    expect(pickWeighted([3, 1], () => 0.9999999999)).toBe(1);
    expect(pickWeighted([1, 0], () => 0.9999999999)).toBe(0);
  });

  it('returns -1 when every weight is 0', () => {
    expect(pickWeighted([0, 0], Math.random)).toBe(-1);
  });

  it('weighs a target without weight as 1', () => {
    expect(weightsOf([{ weight: 3 }, {}, { weight: 0 }])).toEqual([3, 1, 0]);
  });
});
