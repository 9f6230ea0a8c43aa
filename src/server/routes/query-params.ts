/** Query parameters of list routes, checked: a bad value is a 400 naming it. */
import { GatewayError } from '../../core/errors.js';
import { longerThan } from '../../core/metadata-limits.js';

export type Query = Record<string, string | undefined>;

export function integerQuery(query: Query, name: string, min: number, max: number, fallback: number): number {
  const raw = query[name];
  if (raw === undefined || raw === '') return fallback;
  return integerValue(raw, name, min, max);
}

/** `raw` as an integer from `min` to `max`, written in decimal digits (not `2e2`, `0x10` or `1.0`, which
 * Number() reads); a 400 naming `name` otherwise. */
export function integerValue(raw: string, name: string, min: number, max: number): number {
  const value = Number(raw);
  if (!/^-?\d{1,16}$/.test(raw) || !Number.isSafeInteger(value) || value < min || value > max) {
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

/**
 * A list's `after` cursor: the id of the last item of the page before. An empty one (`?after=`, as a
 * templated URL leaves it) is no cursor, the first page, as if it were absent.
 */
export function afterCursor(query: Query): string | undefined {
  return stringQuery(query, 'after') || undefined;
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

/**
 * An object query parameter in OpenAPI's deepObject style (`metadata[team]=a&metadata[env]=prod`): its
 * pairs, undefined when none is given; `name=null` asks for the items that have none (null).
 */
export function deepObjectQuery(
  query: Record<string, unknown>,
  name: string,
  limits: { maxKeys: number; maxKeyLength: number; maxValueLength: number },
): Record<string, string> | null | undefined {
  if (query[name] === 'null') return null;
  if (query[name] !== undefined) {
    throw new GatewayError('invalid_query', `${name} takes ${name}[key]=value pairs, or null`, {
      param: name,
    });
  }
  const prefix = `${name}[`;
  // No prototype: `name[__proto__]=v` is a pair like any other, not a change of prototype that drops it.
  const pairs = Object.create(null) as Record<string, string>;
  let count = 0;
  for (const [raw, value] of Object.entries(query)) {
    if (!raw.startsWith(prefix) || !raw.endsWith(']')) continue;
    const key = raw.slice(prefix.length, -1);
    if (key.length === 0 || longerThan(key, limits.maxKeyLength)) {
      throw new GatewayError('invalid_query', `${name} keys are 1 to ${limits.maxKeyLength} characters`, {
        param: raw,
      });
    }
    if (typeof value !== 'string' || longerThan(value, limits.maxValueLength)) {
      throw new GatewayError(
        'invalid_query',
        `${raw} must be one value of at most ${limits.maxValueLength} characters`,
        { param: raw },
      );
    }
    if (++count > limits.maxKeys) {
      throw new GatewayError('invalid_query', `${name} takes at most ${limits.maxKeys} pairs`, {
        param: name,
      });
    }
    pairs[key] = value;
  }
  return count === 0 ? undefined : pairs;
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
