// Embeddings whose vectors are a pure function of (fake name, input text), so a cached or replayed
// vector can be told apart from a fresh one of another fake.
import { countTokens } from './request-text.js';

export interface EmbeddingRequest {
  model?: string;
  input?: unknown;
  dimensions?: number;
  encoding_format?: 'float' | 'base64';
}

const DEFAULT_DIMENSIONS = 8;

function inputsOf(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input)) {
    if (input.every((x) => typeof x === 'number')) return [input.join(' ')];
    return input.map((x) => (Array.isArray(x) ? x.join(' ') : String(x)));
  }
  return [''];
}

/** A unit vector from a seeded xorshift generator. */
export function fakeVector(seedText: string, dimensions: number): number[] {
  let h = 0x811c9dc5;
  for (let i = 0; i < seedText.length; i++) h = Math.imul(h ^ seedText.charCodeAt(i), 0x01000193) >>> 0;
  let state = h || 1;
  const v: number[] = [];
  for (let i = 0; i < dimensions; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    v.push(((state >>> 0) / 0xffffffff) * 2 - 1);
  }
  const norm = Math.hypot(...v) || 1;
  // Rounded through float32, as the real API returns float32 values.
  return v.map((x) => Math.fround(x / norm));
}

/** Words a bag-of-words vector leaves out, so that paraphrases differing only in them are the same bag. */
const STOP_WORDS = new Set(
  'a an the is are was be of to in on for and or me us please tell what whats which who how do does can could would you your i my it its this that'.split(
    ' ',
  ),
);

/**
 * A bag-of-words unit vector: each content word (lower case, stop words left out) adds one to a
 * dimension chosen by its hash. Requests made of the same words are at cosine 1 whatever their order
 * or filler; each word more or less moves them apart (two bags of n and n+1 words sharing n: √(n/(n+1))).
 */
export function bagOfWordsVector(text: string, dimensions: number): number[] {
  const v = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    if (STOP_WORDS.has(word)) continue;
    let h = 0x811c9dc5;
    for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193) >>> 0;
    v[h % dimensions] += 1;
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => Math.fround(x / norm));
}

/** Models whose embeddings are bags of words (bagOfWordsVector), 256 dimensions by default. */
export const BAG_OF_WORDS_MODEL_PREFIX = 'bow-';

function toBase64(vector: number[]): string {
  return Buffer.from(new Float32Array(vector).buffer).toString('base64');
}

export function embeddingResponse(name: string, request: EmbeddingRequest) {
  const inputs = inputsOf(request.input);
  const bagOfWords = typeof request.model === 'string' && request.model.startsWith(BAG_OF_WORDS_MODEL_PREFIX);
  const dimensions =
    Number.isInteger(request.dimensions) && (request.dimensions as number) > 0
      ? Math.min(request.dimensions as number, 4096)
      : bagOfWords
        ? 256
        : DEFAULT_DIMENSIONS;
  const base64 = request.encoding_format === 'base64';
  const tokens = inputs.reduce((sum, text) => sum + countTokens(text), 0);
  return {
    object: 'list',
    data: inputs.map((text, index) => {
      const vector = bagOfWords
        ? bagOfWordsVector(text, dimensions)
        : fakeVector(`${name}:${text}`, dimensions);
      return { object: 'embedding', index, embedding: base64 ? toBase64(vector) : vector };
    }),
    model: typeof request.model === 'string' ? request.model : 'text-embedding-3-small',
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
