/**
 * The semantic cache's in-process index: exact up to its limit, then hashed; both must find what an
 * exhaustive search finds above a high similarity, and neither may answer with an expired or removed
 * entry.
 */
import { describe, expect, it } from 'vitest';
import { dot, unitVector, VectorIndex } from '../../src/gateway/cache/semantic/vector-index.js';

/** A seeded generator, so every run draws the same vectors. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0xffffffff;
  };
}

function randomUnit(next: () => number, dimensions: number): Float32Array {
  return unitVector(Array.from({ length: dimensions }, () => next() * 2 - 1)) as Float32Array;
}

/** A unit vector at cosine `similarity` of `base`. */
function near(base: Float32Array, similarity: number, next: () => number): Float32Array {
  const noise = randomUnit(next, base.length);
  const along = dot(noise, base);
  const orthogonal = unitVector(noise.map((x, i) => x - along * base[i])) as Float32Array;
  const sine = Math.sqrt(1 - similarity * similarity);
  return unitVector(base.map((x, i) => similarity * x + sine * orthogonal[i])) as Float32Array;
}

describe('VectorIndex', () => {
  it('finds the nearest entry exactly while small', () => {
    const next = random(7);
    const index = new VectorIndex(32, { exactLimit: 100 });
    const vectors = Array.from({ length: 50 }, () => randomUnit(next, 32));
    vectors.forEach((vector, i) => index.add(`e${i}`, vector, Infinity));
    expect(index.approximate).toBe(false);
    const query = near(vectors[17], 0.97, next);
    const found = index.nearest(query, 0);
    expect(found?.id).toBe('e17');
    expect(found?.similarity).toBeCloseTo(0.97, 4);
  });

  it('above its limit, still finds entries close to the query (approximate, measured recall)', () => {
    const next = random(11);
    const dimensions = 64;
    const index = new VectorIndex(dimensions, { exactLimit: 256 });
    const vectors = Array.from({ length: 3000 }, () => randomUnit(next, dimensions));
    vectors.forEach((vector, i) => index.add(`e${i}`, vector, Infinity));
    expect(index.approximate).toBe(true);
    let found = 0;
    const trials = 300;
    for (let t = 0; t < trials; t++) {
      const target = Math.floor(next() * vectors.length);
      const query = near(vectors[target], 0.96, next);
      const result = index.nearest(query, 0);
      if (result?.id === `e${target}`) found += 1;
      // Whatever it answers is measured exactly.
      if (result) expect(result.similarity).toBeCloseTo(dot(vectors[Number(result.id.slice(1))], query), 6);
    }
    // Documented: ≈ 0.96 at cosine 0.95, better closer; the draw is fixed, so this cannot flake.
    expect(found / trials).toBeGreaterThan(0.9);
  });

  it('at 1536 dimensions, answers as an exhaustive search does for entries at the threshold or nearer', () => {
    const next = random(13);
    const dimensions = 1536;
    const index = new VectorIndex(dimensions, { exactLimit: 256 });
    const vectors = Array.from({ length: 3000 }, () => randomUnit(next, dimensions));
    vectors.forEach((vector, i) => index.add(`e${i}`, vector, Infinity));
    expect(index.approximate).toBe(true);
    let agreed = 0;
    const trials = 300;
    for (let t = 0; t < trials; t++) {
      const target = Math.floor(next() * vectors.length);
      // From exactly the threshold to a little above it, where hashing is least sure.
      const query = near(vectors[target], 0.95 + 0.02 * next(), next);
      const result = index.nearest(query, 0, 0.95);
      if (result?.id === `e${target}`) agreed += 1;
    }
    // Documented: ≈ 0.994 at cosine 0.95; the draw is fixed, so this cannot flake.
    expect(agreed / trials).toBeGreaterThanOrEqual(0.98);

    // A query stored after its lookup (a miss storing its vector) is found by the next one.
    const query = randomUnit(next, dimensions);
    expect(index.nearest(query, 0)?.similarity).toBeLessThan(0.5);
    index.add('stored', query, Infinity);
    expect(index.nearest(near(query, 0.99, next), 0)).toMatchObject({ id: 'stored' });
    expect(index.nearest(query, 0)?.similarity).toBeCloseTo(1, 5);
  });

  it('hashed, prefers the later of equal entries and lists the expired ones', () => {
    const next = random(17);
    const index = new VectorIndex(64, { exactLimit: 2 });
    const a = randomUnit(next, 64);
    for (let i = 0; i < 5; i++) index.add(`other${i}`, randomUnit(next, 64), i === 0 ? 10 : Infinity);
    index.add('old', a, Infinity);
    index.add('new', a, Infinity);
    expect(index.approximate).toBe(true);
    expect(index.nearest(a, 0)?.id).toBe('new');
    index.add('old', a, Infinity);
    expect(index.nearest(a, 0)?.id).toBe('old');
    expect(index.expired(10)).toEqual(['other0']);
    expect(index.sweep(10)).toBe(1);
    expect(index.has('other0')).toBe(false);
    expect(index.size).toBe(6);
  });

  it('lists every fresh entry at a threshold or above, exact and hashed alike', () => {
    for (const exactLimit of [1000, 16]) {
      const next = random(19);
      const index = new VectorIndex(64, { exactLimit });
      const base = randomUnit(next, 64);
      Array.from({ length: 300 }, () => randomUnit(next, 64)).forEach((vector, i) =>
        index.add(`e${i}`, vector, Infinity),
      );
      index.add('equal', base, Infinity);
      index.add('near', near(base, 0.98, next), Infinity);
      index.add('nearer', near(base, 0.99, next), Infinity);
      index.add('expired', near(base, 0.99, next), 10);
      index.add('below', near(base, 0.9, next), Infinity);
      expect(index.approximate).toBe(exactLimit === 16);
      expect(index.within(base, 10, 0.95).sort()).toEqual(['equal', 'near', 'nearer']);
      expect(index.within(base, 0, 0.95).sort()).toEqual(['equal', 'expired', 'near', 'nearer']);
    }
  });

  it('forgets removed and expired entries, and keeps slots dense after removals', () => {
    const next = random(3);
    const index = new VectorIndex(16, { exactLimit: 4 });
    const vectors = Array.from({ length: 10 }, () => randomUnit(next, 16));
    vectors.forEach((vector, i) => index.add(`e${i}`, vector, i === 5 ? 1_000 : Infinity));
    expect(index.remove('e3')).toBe(true);
    expect(index.remove('e3')).toBe(false);
    expect(index.nearest(vectors[3], 0)?.id).not.toBe('e3');
    expect(index.nearest(vectors[5], 999)?.id).toBe('e5');
    expect(index.nearest(vectors[5], 1_000)?.id).not.toBe('e5');
    expect(index.sweep(1_000)).toBe(1);
    expect(index.size).toBe(8);
    // The last entry moved into a freed slot is still found.
    expect(index.nearest(vectors[9], 0)?.id).toBe('e9');
  });

  it('replaces an entry added again under the same id, and prefers the later of equal entries', () => {
    const next = random(5);
    const index = new VectorIndex(8);
    const a = randomUnit(next, 8);
    index.add('old', a, Infinity);
    index.add('new', a, Infinity);
    expect(index.nearest(a, 0)?.id).toBe('new');
    index.add('old', a, Infinity);
    expect(index.size).toBe(2);
    expect(() => index.add('bad', new Float32Array(4), Infinity)).toThrow(RangeError);
  });

  it('unitVector refuses a zero or non-finite vector', () => {
    expect(unitVector([0, 0, 0])).toBeUndefined();
    expect(unitVector([1, Number.NaN])).toBeUndefined();
    expect(Array.from(unitVector([3, 4]) as Float32Array)).toEqual([Math.fround(0.6), Math.fround(0.8)]);
  });
});
