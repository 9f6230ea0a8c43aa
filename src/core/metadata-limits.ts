/**
 * OpenAI's metadata limits, checked by every body and filter that takes metadata (responses, batches,
 * fine-tuning jobs, API keys): at most 16 pairs, keys of at most 64 characters, values of at most 512.
 * A character is a Unicode code point, as OpenAI's document counts it ("a maximum length of 64
 * characters"), not a UTF-16 code unit: an emoji outside the Basic Multilingual Plane is one character,
 * though JavaScript's `length` says two. A schema's `maxLength` cannot say this (TypeBox compares
 * `length`), so the lengths are checked here, after the body's schema.
 */
import type { ErrorCode } from './errors.js';
import { fieldError } from './validator/compile-validator.js';

export interface MetadataLimits {
  readonly pairs: number;
  readonly keyLength: number;
  readonly valueLength: number;
}

export const METADATA_LIMITS: MetadataLimits = { pairs: 16, keyLength: 64, valueLength: 512 };

/** Whether `text` has more than `max` characters (code points), without counting past what it needs to. */
export function longerThan(text: string, max: number): boolean {
  // A code point is one or two code units: the length bounds the count both ways.
  if (text.length <= max) return false;
  if (text.length > 2 * max) return true;
  let count = 0;
  for (const _ of text) if (++count > max) return true;
  return false;
}

/**
 * Throws the `code`'s 400 naming the field at fault: `metadata` for the number of pairs, `metadata.<key>`
 * for a key or a value too long. `path` is where the metadata is (`metadata`); `limits` OpenAI's unless
 * the field is the gateway's own (the x-gateway-metadata header).
 */
export function checkMetadataLimits(
  metadata: Readonly<Record<string, string>> | null | undefined,
  path = 'metadata',
  code: ErrorCode = 'invalid_body',
  limits: MetadataLimits = METADATA_LIMITS,
): void {
  if (metadata == null) return;
  const keys = Object.keys(metadata);
  if (keys.length > limits.pairs) {
    throw fieldError(code, path, `has ${keys.length} keys: at most ${limits.pairs} are allowed`);
  }
  for (const key of keys) {
    if (longerThan(key, limits.keyLength)) {
      throw fieldError(
        code,
        `${path}.${key}`,
        `is not a valid key: keys are at most ${limits.keyLength} characters`,
      );
    }
    if (longerThan(metadata[key]!, limits.valueLength)) {
      throw fieldError(code, `${path}.${key}`, `must be at most ${limits.valueLength} characters`);
    }
  }
}
