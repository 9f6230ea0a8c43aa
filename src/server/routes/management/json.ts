/** A JSON object as the management routes read stored documents and request bodies. */
export type Json = Record<string, unknown>;

/** Whether `value` is a JSON object (not null, not an array). */
export const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
