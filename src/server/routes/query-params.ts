/** Query parameters of list routes, checked: a bad value is a 400 naming it. */
import { GatewayError } from '../../core/errors.js';

export type Query = Record<string, string | undefined>;

export function integerQuery(query: Query, name: string, min: number, max: number, fallback: number): number {
  const raw = query[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new GatewayError('invalid_query', `${name} must be an integer from ${min} to ${max}`, {
      param: name,
    });
  }
  return value;
}

export function stringQuery(query: Query, name: string, maxLength = 256): string | undefined {
  const raw = query[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || raw.length > maxLength) {
    throw new GatewayError('invalid_query', `${name} must be a string of at most ${maxLength} characters`, {
      param: name,
    });
  }
  return raw;
}

export function oneOfQuery<T extends string>(
  query: Query,
  name: string,
  allowed: readonly T[],
  fallback: T,
): T {
  const raw = query[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new GatewayError('invalid_query', `${name} must be one of ${allowed.join(', ')}`, { param: name });
  }
  return raw as T;
}

/** A page of a list route as OpenAI's list objects are: its items, their first and last ids, more or not. */
export function listObject<T extends { id: string }>(
  data: T[],
  hasMore: boolean,
): { object: 'list'; data: T[]; first_id: string | null; last_id: string | null; has_more: boolean } {
  return {
    object: 'list',
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: hasMore,
  };
}
