/** Small pieces shared by the management routes. */
import { GatewayError } from '../../../core/errors.js';
import { oneOfQuery, type Query } from '../query-params.js';

export function notFound(what: string, id: string, param: string): GatewayError {
  return new GatewayError('not_found', `No ${what} "${id}" in this workspace`, { param });
}

/** A PATCH that changes nothing is more likely a mistake (a misspelt field is already refused). */
export function requireSomeField(body: object, fields: readonly string[]): void {
  if (!fields.some((field) => (body as Record<string, unknown>)[field] !== undefined)) {
    throw new GatewayError('invalid_body', `Send at least one of: ${fields.join(', ')}`);
  }
}

/** `?force=true`: make a change that would break what depends on it (prompts, configs). */
export function forced(request: { query: unknown }): boolean {
  return oneOfQuery(request.query as Query, 'force', ['true', 'false'], 'false') === 'true';
}

export function pathParam(params: unknown, name: string): string {
  return (params as Record<string, string>)[name];
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
