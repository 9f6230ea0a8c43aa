/**
 * The nearest-neighbour index of one partition of the semantic cache, in process memory. Vectors are
 * kept at unit length, so cosine similarity is a dot product.
 *
 * Up to `exactLimit` entries every vector is compared (exact). Above it, candidates come from
 * random-hyperplane locality-sensitive hashing (SimHash): `tables` hash tables, each keyed by the signs
 * of `bits` projections; an entry whose vector lies within a small angle of the query shares a bucket
 * with it in at least one table with high probability. Candidates are then compared exactly, so the
 * approximation can only miss an entry (a cache miss, one provider call), never return one below the
 * threshold. With the defaults (10 tables of 12 bits), an entry at cosine 0.95 of the query is found
 * with probability ≈ 0.96, one at 0.98 with ≈ 0.998 (per bit, two vectors at angle θ differ with
 * probability θ/π).
 */

export interface VectorIndexOptions {
  /** Entries compared one by one before hashing takes over. Default 1024. */
  exactLimit?: number;
  /** Hash tables of the approximate index. Default 10. */
  tables?: number;
  /** Hyperplanes (bits) per table, at most 30. Default 12. */
  bits?: number;
  /** Seed of the hyperplanes, so two nodes (and two runs) hash alike. */
  seed?: number;
}

export interface Neighbour {
  id: string;
  similarity: number;
}

export const DEFAULT_EXACT_LIMIT = 1024;
const DEFAULT_TABLES = 10;
const DEFAULT_BITS = 12;

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

/** mulberry32: a small seeded generator, so hyperplanes are the same on every node. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Hashing {
  /** tables × bits hyperplanes of `dimensions` each, one after the other. */
  private readonly planes: Float32Array;
  readonly buckets: Array<Map<number, Set<number>>>;

  constructor(
    private readonly dimensions: number,
    private readonly tables: number,
    private readonly bits: number,
    seed: number,
  ) {
    const random = seededRandom(seed);
    this.planes = new Float32Array(tables * bits * dimensions);
    // Gaussian components (Box–Muller): the hyperplanes' normals are uniform on the sphere.
    for (let i = 0; i < this.planes.length; i++) {
      const u = random() || Number.MIN_VALUE;
      this.planes[i] = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
    }
    this.buckets = Array.from({ length: tables }, () => new Map<number, Set<number>>());
  }

  /** The bucket of the vector in every table. */
  signatures(vector: Float32Array): number[] {
    const { dimensions, bits } = this;
    const out: number[] = [];
    for (let table = 0; table < this.tables; table++) {
      let signature = 0;
      for (let bit = 0; bit < bits; bit++) {
        const offset = (table * bits + bit) * dimensions;
        let sum = 0;
        for (let i = 0; i < dimensions; i++) sum += this.planes[offset + i] * vector[i];
        if (sum >= 0) signature |= 1 << bit;
      }
      out.push(signature);
    }
    return out;
  }

  add(slot: number, signatures: number[]): void {
    signatures.forEach((signature, table) => {
      const map = this.buckets[table];
      let bucket = map.get(signature);
      if (!bucket) map.set(signature, (bucket = new Set()));
      bucket.add(slot);
    });
  }

  remove(slot: number, signatures: number[]): void {
    signatures.forEach((signature, table) => {
      const bucket = this.buckets[table].get(signature);
      bucket?.delete(slot);
      if (bucket && bucket.size === 0) this.buckets[table].delete(signature);
    });
  }
}

interface Slot {
  id: string;
  vector: Float32Array;
  expiresAtMs: number;
  /** Its buckets, once hashing is on. */
  signatures: number[] | undefined;
}

export class VectorIndex {
  private readonly slots: Slot[] = [];
  private readonly slotOf = new Map<string, number>();
  private hashing: Hashing | undefined;
  private readonly exactLimit: number;
  private readonly tables: number;
  private readonly bits: number;
  private readonly seed: number;

  constructor(
    readonly dimensions: number,
    options: VectorIndexOptions = {},
  ) {
    this.exactLimit = options.exactLimit ?? DEFAULT_EXACT_LIMIT;
    this.tables = options.tables ?? DEFAULT_TABLES;
    this.bits = options.bits ?? DEFAULT_BITS;
    this.seed = options.seed ?? 0x5eed;
    if (!Number.isInteger(dimensions) || dimensions < 1) throw new RangeError('dimensions must be ≥ 1');
    if (!(this.bits >= 1 && this.bits <= 30)) throw new RangeError('bits must be in [1, 30]');
  }

  get size(): number {
    return this.slots.length;
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
    const slot: Slot = { id, vector, expiresAtMs, signatures: undefined };
    const index = this.slots.length;
    this.slots.push(slot);
    this.slotOf.set(id, index);
    if (this.hashing) {
      slot.signatures = this.hashing.signatures(vector);
      this.hashing.add(index, slot.signatures);
    } else if (this.slots.length > this.exactLimit) {
      this.startHashing();
    }
  }

  remove(id: string): boolean {
    const index = this.slotOf.get(id);
    if (index === undefined) return false;
    const last = this.slots.length - 1;
    const removed = this.slots[index];
    if (this.hashing && removed.signatures) this.hashing.remove(index, removed.signatures);
    if (index !== last) {
      // The last entry takes the freed slot, so slots stay dense.
      const moved = this.slots[last];
      if (this.hashing && moved.signatures) {
        this.hashing.remove(last, moved.signatures);
        this.hashing.add(index, moved.signatures);
      }
      this.slots[index] = moved;
      this.slotOf.set(moved.id, index);
    }
    this.slots.pop();
    this.slotOf.delete(id);
    return true;
  }

  /** Removes the entries expired at `nowMs`; returns how many. */
  sweep(nowMs: number): number {
    const expired = this.slots.filter((slot) => slot.expiresAtMs <= nowMs).map((slot) => slot.id);
    for (const id of expired) this.remove(id);
    return expired.length;
  }

  /** The fresh entry most similar to the query (a unit vector), or undefined when there is none. */
  nearest(query: Float32Array, nowMs: number): Neighbour | undefined {
    if (query.length !== this.dimensions) return undefined;
    let best: Neighbour | undefined;
    const consider = (slot: Slot) => {
      if (slot.expiresAtMs <= nowMs) return;
      const similarity = dot(query, slot.vector);
      // On a tie the later entry wins: a refreshed answer replaces the one it repeats.
      if (!best || similarity >= best.similarity) best = { id: slot.id, similarity };
    };
    if (!this.hashing) {
      for (const slot of this.slots) consider(slot);
      return best;
    }
    const seen = new Set<number>();
    this.hashing.signatures(query).forEach((signature, table) => {
      const bucket = this.hashing?.buckets[table].get(signature);
      if (!bucket) return;
      for (const index of bucket) {
        if (seen.has(index)) continue;
        seen.add(index);
        consider(this.slots[index]);
      }
    });
    return best;
  }

  private startHashing(): void {
    const hashing = new Hashing(this.dimensions, this.tables, this.bits, this.seed);
    this.slots.forEach((slot, index) => {
      slot.signatures = hashing.signatures(slot.vector);
      hashing.add(index, slot.signatures);
    });
    this.hashing = hashing;
  }
}
