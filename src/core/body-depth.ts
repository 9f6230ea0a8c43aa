/**
 * Bodies nested deeper than any real request are refused before anything walks them recursively
 * (validation, serialisation, redaction would otherwise overflow the stack). Iterative, so the check itself
 * cannot overflow. The /v1 JSON parser (server/app.ts) applies it to every body, model calls and management
 * alike; a managed batch to each line's body (gateway/batches/batch-input.ts).
 */
import { GatewayError } from './errors.js';

export const MAX_BODY_DEPTH = 128;

export function assertBodyDepth(body: unknown, maxDepth = MAX_BODY_DEPTH): void {
  if (body === null || typeof body !== 'object') return;
  // The objects still to look into, each with its depth and the top-level field it sits under (so that
  // the error can name it): three stacks in step, nothing allocated per object looked into.
  const values: object[] = [body];
  const depths: number[] = [1];
  const fields: Array<string | null> = [null];
  const topIsArray = Array.isArray(body);
  while (values.length > 0) {
    const value = values.pop() as Record<string, unknown>;
    const depth = depths.pop() as number;
    const field = fields.pop() as string | null;
    if (depth > maxDepth) {
      throw new GatewayError(
        'invalid_body',
        `${field ?? 'The body'} is nested deeper than ${maxDepth} levels`,
        {
          param: field,
        },
      );
    }
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const child: unknown = value[i];
        if (child !== null && typeof child === 'object') {
          values.push(child);
          depths.push(depth + 1);
          fields.push(field);
        }
      }
      continue;
    }
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      const child = value[key];
      if (child !== null && typeof child === 'object') {
        values.push(child);
        depths.push(depth + 1);
        fields.push(field ?? (topIsArray ? null : key));
      }
    }
  }
}
