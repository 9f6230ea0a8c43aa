/**
 * Sign bits of a pseudo-random rotation of a vector: the hashes of the semantic cache's approximate
 * index (vector-index.ts). Each bit is the side of a hyperplane through the origin the vector lies on,
 * so two vectors at angle θ differ in a bit with probability ≈ θ/π (random-hyperplane hashing, SimHash).
 *
 * Instead of one dense Gaussian hyperplane per bit (dimensions multiplications each), the vector is
 * zero-padded to a power of two P and rotated by three rounds of random sign flips and a Walsh–Hadamard
 * transform (H·D₃·H·D₂·H·D₁): P log₂ P additions give P bits whose hyperplanes are orthogonal and
 * spread like random ones. At 1536 dimensions that is ~34,000 additions for 2048 bits, where dense
 * hyperplanes cost 1536 multiplications per bit. More bits than P take more rotations (chains), each
 * with signs of its own. The signs come from a seeded generator, so every node hashes alike.
 */

/** mulberry32: a small seeded generator, so the rotations are the same on every node. */
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

const ROUNDS = 3;
/** Below this a rotation mixes too few coordinates; tiny vectors are padded up to it. */
const MIN_WIDTH = 64;

/** In-place unnormalised Walsh–Hadamard transform of a power-of-two length (signs are all we read). */
function walshHadamard(values: Float64Array): void {
  const n = values.length;
  for (let half = 1; half < n; half <<= 1) {
    for (let start = 0; start < n; start += half << 1) {
      for (let i = start, end = start + half; i < end; i++) {
        const a = values[i];
        const b = values[i + half];
        values[i] = a + b;
        values[i + half] = a - b;
      }
    }
  }
}

export class RotationHash {
  /** Padded length of one rotation: its number of bits. */
  readonly width: number;
  /** chains × ROUNDS sign vectors of `width` each (±1). */
  private readonly signs: Float64Array;
  private readonly chains: number;
  private readonly scratch: Float64Array;

  constructor(
    readonly dimensions: number,
    /** Bits wanted per vector. */
    readonly bits: number,
    seed: number,
  ) {
    let width = MIN_WIDTH;
    while (width < dimensions) width <<= 1;
    this.width = width;
    this.chains = Math.ceil(bits / width);
    const random = seededRandom(seed);
    this.signs = new Float64Array(this.chains * ROUNDS * width);
    for (let i = 0; i < this.signs.length; i++) this.signs[i] = random() < 0.5 ? -1 : 1;
    this.scratch = new Float64Array(width);
  }

  /**
   * Writes bit k (k < bits) of the vector's hash to `out` (word k >>> 5, bit k & 31). `out` must have
   * room for ⌈bits / 32⌉ words; it is cleared first.
   */
  hash(vector: ArrayLike<number>, out: Uint32Array): void {
    const { width, dimensions, scratch, signs, bits } = this;
    out.fill(0, 0, (bits + 31) >>> 5);
    for (let chain = 0; chain < this.chains; chain++) {
      for (let i = 0; i < dimensions; i++) scratch[i] = vector[i];
      scratch.fill(0, dimensions);
      for (let round = 0; round < ROUNDS; round++) {
        const offset = (chain * ROUNDS + round) * width;
        for (let i = 0; i < width; i++) scratch[i] *= signs[offset + i];
        walshHadamard(scratch);
      }
      const first = chain * width;
      const count = Math.min(width, bits - first);
      for (let i = 0; i < count; i++) {
        if (scratch[i] >= 0) {
          const k = first + i;
          out[k >>> 5] |= 1 << (k & 31);
        }
      }
    }
  }
}

/** The `count` bits of `words` from bit `from` on, as a non-negative integer (count ≤ 30). */
export function bitsAt(words: Uint32Array, offset: number, from: number, count: number): number {
  let value = 0;
  for (let i = 0; i < count; i++) {
    const k = from + i;
    value |= ((words[offset + (k >>> 5)] >>> (k & 31)) & 1) << i;
  }
  return value;
}

/** Bits set in a 32-bit word. */
export function popcount(word: number): number {
  let x = word - ((word >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}
