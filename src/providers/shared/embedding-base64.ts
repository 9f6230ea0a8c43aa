/**
 * OpenAI's `encoding_format: "base64"`: the vector as little-endian float32 bytes, base64 encoded. For
 * providers that only answer floats, the gateway produces it itself.
 */
export function embeddingToBase64(values: readonly number[]): string {
  const bytes = Buffer.alloc(values.length * 4);
  values.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString('base64');
}
