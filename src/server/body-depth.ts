/**
 * Bodies nested deeper than any real request are refused before anything walks them recursively
 * (validation, serialisation, redaction would otherwise overflow the stack). Iterative, so the check itself
 * cannot overflow.
 */
import { GatewayError } from '../core/errors.js';

export const MAX_BODY_DEPTH = 128;

export function assertBodyDepth(body: unknown, maxDepth = MAX_BODY_DEPTH): void {
  if (body === null || typeof body !== 'object') return;
  // Each entry remembers the top-level field it sits under, so the error can name it.
  const stack: Array<{ value: object; depth: number; field: string | null }> = [
    { value: body, depth: 1, field: null },
  ];
  while (stack.length > 0) {
    const { value, depth, field } = stack.pop()!;
    if (depth > maxDepth) {
      throw new GatewayError(
        'invalid_body',
        `${field ?? 'The body'} is nested deeper than ${maxDepth} levels`,
        {
          param: field,
        },
      );
    }
    for (const [key, child] of Object.entries(value)) {
      if (child !== null && typeof child === 'object') {
        stack.push({ value: child, depth: depth + 1, field: field ?? (Array.isArray(body) ? null : key) });
      }
    }
  }
}
