/**
 * The nearest-neighbour index of one partition of the semantic cache, in process memory. Vectors are
 * kept at unit length, so cosine similarity is a dot product.
 *
 * Up to `exactLimit` entries every vector is compared (exact). Above it, each entry is hashed
 * (rotation-hash.ts) into `tables` hash tables keyed by `bits` sign bits each, and keeps a sketch of
 * `sketchBits` more sign bits. A lookup takes the entries sharing a bucket with the query in any table as
 * candidates, and compares their sketches with the query's: the number of differing bits estimates the
 * angle (each bit differs with probability θ/π). Candidates whose sketch could be within the asked
 * similarity (a bound well above the expected count of differing bits, so a true neighbour passes
 * with near certainty), and the few nearest by sketch whatever the similarity, are then compared
 * exactly over their floats. A candidate costs a few word operations instead of a dot product over
 * every dimension; only likely answers pay for that. The approximation can only miss an entry (a cache
 * miss, one provider call), never return one below the threshold: what it returns is measured exactly.
 *
 * With the defaults (20 tables of 14 bits), an entry at cosine 0.95 of the query shares a bucket in
 * some table with probability ≈ 0.994, one at 0.98 with ≈ 0.9999; at random (unrelated entries) a table
 * yields 1 in 16,384 of the entries. Storage is contiguous (chunks of floats; hashes and buckets in flat typed arrays)
 * and a lookup allocates nothing but its answer.
 */
import { bitsAt, popcount, RotationHash } from './rotation-hash.js';

export interface VectorIndexOptions {
  /**
   * Entries compared one by one before hashing takes over. Default: as many as make EXACT_FLOATS floats
   * (an exhaustive search costs entries × dimensions), at most 1024: 1024 at 256 dimensions, 170 at 1536.
   */
  exactLimit?: number;
  /** Hash tables of the approximate index. Default 20. */
  tables?: number;
  /** Bits per table, at most 16 (a table has a head for each of its 2^bits buckets). Default 14. */
  bits?: number;
  /** Bits of each entry's sketch, compared before its floats; a multiple of 32. Default 256. */
  sketchBits?: number;
  /** Seed of the rotations, so two nodes (and two runs) hash alike. */
  seed?: number;
}

export interface Neighbour {
  id: string;
  similarity: number;
}

/** The floats an exhaustive search reads at most by default: ~0.2 ms of a core. */
export const EXACT_FLOATS = 262_144;
const MAX_DEFAULT_EXACT_LIMIT = 1024;
const DEFAULT_TABLES = 20;
const DEFAULT_BITS = 14;
const DEFAULT_SKETCH_BITS = 256;
/** Candidates compared exactly whatever their sketch says, so a miss still reports its nearest entry. */
const NEAREST_BY_SKETCH = 4;
/** The sketch bound lies this many standard deviations above the expected differing bits. */
const SKETCH_SIGMAS = 4.5;
/** Entries per chunk of float storage: growing never copies the vectors already held. */
const CHUNK = 1024;

/**
 * How far under a threshold a similarity may fall and still reach it: the rounding of float32 vectors.
 * A unit vector stored as float32 has each coordinate within 2^-24 of its own, so its dot product with
 * itself is within 2^-23 of 1 (0.99999994 is common); twice that lets a vector equal to a stored one
 * answer at a threshold of 1, and moves any other threshold by less than the four decimals it is reported in.
 */
export const SIMILARITY_TOLERANCE = 2 ** -22;

/** The vector scaled to unit length (a copy); undefined for a zero or non-finite vector. */
export function unitVector(values: ArrayLike<number>): Float32Array | undefined {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i] * values[i];
  const norm = Math.sqrt(sum);
  if (!(norm > 0) || !Number.isFinite(norm)) return undefined;
  const unit = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) unit[i] = values[i] / norm;
  return unit;
}

export function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i] * b[i];
  return sum;
}

/** The dot product of `query` with the `dimensions` floats of `chunk` from `offset`. */
function dotAt(query: Float32Array, chunk: Float32Array, offset: number, dimensions: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  for (const end = dimensions - 3; i < end; i += 4) {
    s0 += query[i] * chunk[offset + i];
    s1 += query[i + 1] * chunk[offset + i + 1];
    s2 += query[i + 2] * chunk[offset + i + 2];
    s3 += query[i + 3] * chunk[offset + i + 3];
  }
  for (; i < dimensions; i++) s0 += query[i] * chunk[offset + i];
  return s0 + s1 + s2 + s3;
}

function grown<T extends Float64Array | Uint32Array | Int32Array>(array: T, needed: number): T {
  if (array.length >= needed) return array;
  const next = new (array.constructor as new (length: number) => T)(Math.max(needed, array.length * 2, 64));
  next.set(array);
  return next;
}

/**
 * The hash tables and sketches, once the index holds more than its exact limit. A bucket is a chain of
 * slots through typed arrays (a head per table and key, a next slot per slot and table), so the tables
 * are a few flat arrays however many entries they hold, and never objects for the collector to trace.
 */
class Hashing {
  readonly rotation: RotationHash;
  /** First word of the sketch within a vector's hash words (table bits come first, word-aligned). */
  readonly sketchWord: number;
  readonly sketchWords: number;
  readonly words: number;
  /** The first slot of each bucket, −1 when empty: `tables` × 2^`bits`. */
  readonly heads: Int32Array;
  /** The next slot of the same bucket, −1 at its end: `tables` per slot. */
  next = new Int32Array(0);
  /** Every slot's hash words, `words` per slot. */
  codes = new Uint32Array(0);

  constructor(
    dimensions: number,
    readonly tables: number,
    readonly bits: number,
    sketchBits: number,
    seed: number,
  ) {
    this.sketchWord = Math.ceil((tables * bits) / 32);
    this.sketchWords = sketchBits / 32;
    this.words = this.sketchWord + this.sketchWords;
    this.rotation = new RotationHash(dimensions, this.words * 32, seed);
    this.heads = new Int32Array(tables * 2 ** bits).fill(-1);
  }

  /** The bucket of the vector whose hash words are in `codes` at `offset`, in `table`. */
  bucket(codes: Uint32Array, offset: number, table: number): number {
    return table * 2 ** this.bits + bitsAt(codes, offset, table * this.bits, this.bits);
  }

  /** Puts the slot (whose hash words are in `codes` at its place) at the head of its buckets. */
  insert(slot: number): void {
    const { tables } = this;
    this.next = grown(this.next, (slot + 1) * tables);
    for (let table = 0; table < tables; table++) {
      const bucket = this.bucket(this.codes, slot * this.words, table);
      this.next[slot * tables + table] = this.heads[bucket];
      this.heads[bucket] = slot;
    }
  }

  /** Takes `slot` out of its buckets, or puts `to` in its place there (with its links). */
  replace(slot: number, to: number | undefined): void {
    const { tables, next, heads } = this;
    for (let table = 0; table < tables; table++) {
      const bucket = this.bucket(this.codes, slot * this.words, table);
      let previous = -1;
      let current = heads[bucket];
      while (current >= 0 && current !== slot) {
        previous = current;
        current = next[current * tables + table];
      }
      if (current < 0) continue;
      const after = next[slot * tables + table];
      const link = to ?? after;
      if (previous < 0) heads[bucket] = link;
      else next[previous * tables + table] = link;
      if (to !== undefined) next[to * tables + table] = after;
    }
  }
}

export class VectorIndex {
  private readonly ids: string[] = [];
  private readonly slotOf = new Map<string, number>();
  private readonly chunks: Float32Array[] = [];
  private expires = new Float64Array(0);
  /** Order of addition: on a tie the later entry wins. */
  private sequence = new Float64Array(0);
  private nextSequence = 0;
  /** Which lookup last saw a slot, so a candidate met in two tables is scored once. */
  private seen = new Uint32Array(0);
  private lookup = 0;
  private hashing: Hashing | undefined;
  /** The hash words of the last query, kept for its insertion (a miss stores the vector it looked up). */
  private queryCodes = new Uint32Array(0);
  private hashedQuery: Float32Array | undefined;
  private readonly nearestSlots = new Int32Array(NEAREST_BY_SKETCH);
  private readonly nearestDistances = new Int32Array(NEAREST_BY_SKETCH);
  private readonly sketchBounds = new Map<number, number>();
  private readonly exactLimit: number;
  private readonly tables: number;
  private readonly bits: number;
  private readonly sketchBits: number;
  private readonly seed: number;

  constructor(
    readonly dimensions: number,
    options: VectorIndexOptions = {},
  ) {
    if (!Number.isInteger(dimensions) || dimensions < 1) throw new RangeError('dimensions must be ≥ 1');
    this.exactLimit =
      options.exactLimit ??
      Math.min(MAX_DEFAULT_EXACT_LIMIT, Math.max(1, Math.floor(EXACT_FLOATS / dimensions)));
    this.tables = options.tables ?? DEFAULT_TABLES;
    this.bits = options.bits ?? DEFAULT_BITS;
    this.sketchBits = options.sketchBits ?? DEFAULT_SKETCH_BITS;
    this.seed = options.seed ?? 0x5eed;
    if (!(Number.isInteger(this.bits) && this.bits >= 1 && this.bits <= 16)) {
      throw new RangeError('bits must be in [1, 16]');
    }
    if (!(Number.isInteger(this.tables) && this.tables >= 1)) throw new RangeError('tables must be ≥ 1');
    if (!(this.sketchBits >= 32 && this.sketchBits % 32 === 0)) {
      throw new RangeError('sketchBits must be a positive multiple of 32');
    }
  }

  get size(): number {
    return this.ids.length;
  }

  /** Whether lookups go through the hash tables (more than `exactLimit` entries were held). */
  get approximate(): boolean {
    return this.hashing !== undefined;
  }

  has(id: string): boolean {
    return this.slotOf.has(id);
  }

  /** Adds (or replaces) an entry. The vector must be of unit length and of the index's dimensions. */
  add(id: string, vector: Float32Array, expiresAtMs: number): void {
    if (vector.length !== this.dimensions) throw new RangeError('vector of the wrong dimensions');
    this.remove(id);
    const slot = this.ids.length;
    const needed = slot + 1;
    if (this.chunks.length * CHUNK < needed) this.chunks.push(new Float32Array(CHUNK * this.dimensions));
    this.chunks[Math.floor(slot / CHUNK)].set(vector, (slot % CHUNK) * this.dimensions);
    this.expires = grown(this.expires, needed);
    this.sequence = grown(this.sequence, needed);
    this.seen = grown(this.seen, needed);
    this.expires[slot] = expiresAtMs;
    this.sequence[slot] = this.nextSequence++;
    this.seen[slot] = 0;
    this.ids.push(id);
    this.slotOf.set(id, slot);
    const { hashing } = this;
    if (hashing) {
      hashing.codes = grown(hashing.codes, needed * hashing.words);
      const target = hashing.codes.subarray(slot * hashing.words, needed * hashing.words);
      if (vector === this.hashedQuery) target.set(this.queryCodes.subarray(0, hashing.words));
      else hashing.rotation.hash(vector, target);
      hashing.insert(slot);
    } else if (this.ids.length > this.exactLimit) {
      this.startHashing();
    }
  }

  remove(id: string): boolean {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return false;
    const last = this.ids.length - 1;
    const { hashing } = this;
    hashing?.replace(slot, undefined);
    if (slot !== last) {
      // The last entry takes the freed slot, so slots stay dense.
      const lastChunk = this.chunks[Math.floor(last / CHUNK)];
      const from = (last % CHUNK) * this.dimensions;
      this.chunks[Math.floor(slot / CHUNK)].set(
        lastChunk.subarray(from, from + this.dimensions),
        (slot % CHUNK) * this.dimensions,
      );
      this.expires[slot] = this.expires[last];
      this.sequence[slot] = this.sequence[last];
      this.seen[slot] = this.seen[last];
      if (hashing) {
        hashing.replace(last, slot);
        hashing.codes.copyWithin(slot * hashing.words, last * hashing.words, (last + 1) * hashing.words);
      }
      const moved = this.ids[last];
      this.ids[slot] = moved;
      this.slotOf.set(moved, slot);
    }
    this.ids.pop();
    this.slotOf.delete(id);
    // A chunk left empty is given back.
    if (this.chunks.length > Math.ceil(this.ids.length / CHUNK) + 1) this.chunks.pop();
    return true;
  }

  /** The ids of the entries expired at `nowMs`. */
  expired(nowMs: number): string[] {
    const ids: string[] = [];
    for (let slot = 0; slot < this.ids.length; slot++)
      if (this.expires[slot] <= nowMs) ids.push(this.ids[slot]);
    return ids;
  }

  /** Removes the entries expired at `nowMs`; returns how many. */
  sweep(nowMs: number): number {
    let removed = 0;
    // From the end, so an entry moved into a freed slot has been looked at already.
    for (let slot = this.ids.length - 1; slot >= 0; slot--) {
      if (this.expires[slot] <= nowMs && this.remove(this.ids[slot])) removed += 1;
    }
    return removed;
  }

  /**
   * The fresh entry most similar to the query (a unit vector), or undefined when there is none. Above
   * the exact limit, an entry at `threshold` or above that is a candidate is never passed over for the
   * sketch's sake; below it, the nearest of the candidates by sketch are still measured, so a miss can
   * tell how near it came.
   */
  nearest(query: Float32Array, nowMs: number, threshold = 0.9): Neighbour | undefined {
    if (query.length !== this.dimensions) return undefined;
    const hashing = this.hashing;
    const best = hashing
      ? this.nearestHashed(hashing, query, nowMs, threshold)
      : this.nearestExact(query, nowMs);
    return best < 0 ? undefined : { id: this.ids[best], similarity: this.similarity(query, best) };
  }

  /**
   * The ids of the fresh entries at `threshold` or above of the query: every one while the index is exact,
   * those the hash tables find above its limit (as `nearest`, it may miss one, never add one below).
   */
  within(query: Float32Array, nowMs: number, threshold: number): string[] {
    const ids: string[] = [];
    if (query.length !== this.dimensions) return ids;
    const consider = (slot: number) => {
      if (this.expires[slot] > nowMs && this.similarity(query, slot) >= threshold) ids.push(this.ids[slot]);
    };
    const { hashing } = this;
    if (!hashing) {
      for (let slot = 0; slot < this.ids.length; slot++) consider(slot);
      return ids;
    }
    const { words, sketchWord, sketchWords, codes, tables, heads, next } = hashing;
    this.queryCodes = grown(this.queryCodes, words);
    const queryCodes = this.queryCodes;
    hashing.rotation.hash(query, queryCodes);
    this.hashedQuery = query;
    const bound = this.sketchBound(threshold);
    if (++this.lookup === 0xffffffff) {
      this.seen.fill(0);
      this.lookup = 1;
    }
    const { lookup, seen } = this;
    for (let table = 0; table < tables; table++) {
      const bucket = hashing.bucket(queryCodes, 0, table);
      for (let slot = heads[bucket]; slot >= 0; slot = next[slot * tables + table]) {
        if (seen[slot] === lookup) continue;
        seen[slot] = lookup;
        let distance = 0;
        const offset = slot * words + sketchWord;
        for (let w = 0; w < sketchWords; w++) {
          distance += popcount(codes[offset + w] ^ queryCodes[sketchWord + w]);
        }
        if (distance <= bound) consider(slot);
      }
    }
    return ids;
  }

  private nearestExact(query: Float32Array, nowMs: number): number {
    let best = -1;
    let bestSimilarity = -Infinity;
    for (let slot = 0; slot < this.ids.length; slot++) {
      if (this.expires[slot] <= nowMs) continue;
      const similarity = this.similarity(query, slot);
      if (this.better(slot, similarity, best, bestSimilarity)) {
        best = slot;
        bestSimilarity = similarity;
      }
    }
    return best;
  }

  private nearestHashed(hashing: Hashing, query: Float32Array, nowMs: number, threshold: number): number {
    const { words, sketchWord, sketchWords, codes } = hashing;
    this.queryCodes = grown(this.queryCodes, words);
    const queryCodes = this.queryCodes;
    hashing.rotation.hash(query, queryCodes);
    this.hashedQuery = query;
    const bound = this.sketchBound(threshold);
    const { nearestSlots, nearestDistances, seen } = this;
    nearestDistances.fill(0x7fffffff);
    nearestSlots.fill(-1);
    if (++this.lookup === 0xffffffff) {
      seen.fill(0);
      this.lookup = 1;
    }
    const lookup = this.lookup;
    let best = -1;
    let bestSimilarity = -Infinity;
    const { tables, heads, next } = hashing;
    for (let table = 0; table < tables; table++) {
      const bucket = hashing.bucket(queryCodes, 0, table);
      for (let slot = heads[bucket]; slot >= 0; slot = next[slot * tables + table]) {
        if (seen[slot] === lookup) continue;
        seen[slot] = lookup;
        if (this.expires[slot] <= nowMs) continue;
        let distance = 0;
        const offset = slot * words + sketchWord;
        for (let w = 0; w < sketchWords; w++) {
          distance += popcount(codes[offset + w] ^ queryCodes[sketchWord + w]);
        }
        if (distance <= bound) {
          const similarity = this.similarity(query, slot);
          if (this.better(slot, similarity, best, bestSimilarity)) {
            best = slot;
            bestSimilarity = similarity;
          }
        } else {
          this.keepNearest(slot, distance);
        }
      }
    }
    for (let i = 0; i < NEAREST_BY_SKETCH; i++) {
      const slot = nearestSlots[i];
      if (slot < 0) break;
      const similarity = this.similarity(query, slot);
      if (this.better(slot, similarity, best, bestSimilarity)) {
        best = slot;
        bestSimilarity = similarity;
      }
    }
    return best;
  }

  /** Keeps the few candidates of least sketch distance, in order. */
  private keepNearest(slot: number, distance: number): void {
    const { nearestSlots, nearestDistances } = this;
    let at = NEAREST_BY_SKETCH - 1;
    if (distance >= nearestDistances[at]) return;
    while (at > 0 && nearestDistances[at - 1] > distance) {
      nearestDistances[at] = nearestDistances[at - 1];
      nearestSlots[at] = nearestSlots[at - 1];
      at -= 1;
    }
    nearestDistances[at] = distance;
    nearestSlots[at] = slot;
  }

  /** On a tie the later entry wins: a refreshed answer replaces the one it repeats. */
  private better(slot: number, similarity: number, best: number, bestSimilarity: number): boolean {
    if (best < 0 || similarity > bestSimilarity) return true;
    return similarity === bestSimilarity && this.sequence[slot] > this.sequence[best];
  }

  private similarity(query: Float32Array, slot: number): number {
    return dotAt(
      query,
      this.chunks[Math.floor(slot / CHUNK)],
      (slot % CHUNK) * this.dimensions,
      this.dimensions,
    );
  }

  /**
   * Most sketch bits an entry at `threshold` differs from the query in, but for a chance of about one in
   * 300,000: the expected count (bits × θ/π) plus SKETCH_SIGMAS standard deviations of a binomial.
   */
  private sketchBound(threshold: number): number {
    let bound = this.sketchBounds.get(threshold);
    if (bound === undefined) {
      const p = Math.acos(Math.min(1, Math.max(-1, threshold))) / Math.PI;
      const n = this.sketchBits;
      bound = Math.ceil(n * p + SKETCH_SIGMAS * Math.sqrt(n * p * (1 - p))) + 1;
      if (this.sketchBounds.size > 64) this.sketchBounds.clear();
      this.sketchBounds.set(threshold, bound);
    }
    return bound;
  }

  private startHashing(): void {
    const hashing = new Hashing(this.dimensions, this.tables, this.bits, this.sketchBits, this.seed);
    hashing.codes = new Uint32Array(Math.max(64, this.ids.length * 2) * hashing.words);
    const vector = new Float32Array(this.dimensions);
    for (let slot = 0; slot < this.ids.length; slot++) {
      const chunk = this.chunks[Math.floor(slot / CHUNK)];
      const from = (slot % CHUNK) * this.dimensions;
      vector.set(chunk.subarray(from, from + this.dimensions));
      hashing.rotation.hash(vector, hashing.codes.subarray(slot * hashing.words, (slot + 1) * hashing.words));
      hashing.insert(slot);
    }
    this.hashing = hashing;
  }
}
