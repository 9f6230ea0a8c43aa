/**
 * U+0000 (`%00`) in a /v1 URL is refused before any route reads it: no id holds it, no filter can match
 * it, and PostgreSQL refuses it in any text it is sent (a query with it failed with a 500 there, while
 * SQLite answered 404). A path parameter holding it names nothing (404); a query parameter is a 400. Both
 * name the parameter.
 */
import type { FastifyRequest } from 'fastify';
import { GatewayError } from '../core/errors.js';

const NUL = '\u0000';

export function nulInUrl(request: FastifyRequest): GatewayError | undefined {
  // The only way U+0000 reaches a decoded value: Node's HTTP parser refuses the byte itself.
  if (!request.url.includes('%00')) return undefined;
  for (const [name, value] of Object.entries(request.params as Record<string, unknown>)) {
    if (typeof value === 'string' && value.includes(NUL)) {
      return new GatewayError('not_found', `No resource has an id holding U+0000 (${name})`, {
        param: name === '*' ? null : name,
      });
    }
  }
  for (const [name, value] of Object.entries(request.query as Record<string, unknown>)) {
    const values: unknown[] = Array.isArray(value) ? value : [value];
    if (name.includes(NUL) || values.some((item) => typeof item === 'string' && item.includes(NUL))) {
      return new GatewayError('invalid_query', `${name} holds U+0000, which no value may hold`, {
        param: name,
      });
    }
  }
  return undefined;
}
