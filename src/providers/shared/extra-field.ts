/**
 * A top-level key of the request that its schema does not name. The schemas let unknown keys through so a
 * provider's own parameters (Cohere's `input_type`, …) reach it; their value is whatever the client sent.
 */
export function extraField(body: Readonly<Record<string, unknown>>, name: string): unknown {
  return body[name];
}
