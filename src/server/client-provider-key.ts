/**
 * A client's provider key sent where its provider's own SDK puts it: `x-api-key` (Anthropic), `api-key`
 * (Azure), `x-goog-api-key` (Gemini). Read as the key `Authorization: Bearer` carries on the OpenAI routes:
 * the key of a target that has none of its own, which the target's adapter sends in its provider's header.
 * Never forwarded as it came: a target of another provider (or with a key of its own) must not receive it.
 * Nor is Gemini's `?key=` on a pass-through (takeQueryKey).
 */
import { GatewayError } from '../core/errors.js';
import { headerValue, type RequestContext } from '../gateway/context.js';

export const PROVIDER_KEY_HEADERS = ['x-api-key', 'api-key', 'x-goog-api-key'] as const;

/** The request's context with the first of `names` present read as `Authorization: Bearer`, when the
 * request has no Authorization of its own; else `queryKey`, a key the request's query gave. */
export function withClientProviderKey(
  gw: RequestContext,
  names: readonly string[] = PROVIDER_KEY_HEADERS,
  queryKey?: string,
): RequestContext {
  if (headerValue(gw.headers, 'authorization')) return gw;
  for (const name of names) {
    const key = headerValue(gw.headers, name);
    if (key) return { ...gw, headers: { ...gw.headers, authorization: `Bearer ${key}` } };
  }
  if (queryKey) return { ...gw, headers: { ...gw.headers, authorization: `Bearer ${queryKey}` } };
  return gw;
}

/**
 * A pass-through path with Gemini's `key` query parameter (its REST form of `x-goog-api-key`) taken out,
 * and that key (the first, when several). Forwarded in the query, it would reach whichever target answers
 * — another provider's after a fallback, or one with a key of its own — so it is read as the provider key
 * headers are, and the target's adapter puts the key where its provider wants it. The rest of the query
 * goes as it came, byte for byte.
 */
export function takeQueryKey(path: string): { path: string; key: string | undefined } {
  const mark = path.indexOf('?');
  if (mark < 0) return { path, key: undefined };
  let key: string | undefined;
  const kept: string[] = [];
  for (const pair of path.slice(mark + 1).split('&')) {
    const equals = pair.indexOf('=');
    const name = formDecoded(equals < 0 ? pair : pair.slice(0, equals));
    if (name !== 'key') {
      kept.push(pair);
      continue;
    }
    key ??= equals < 0 ? '' : formDecoded(pair.slice(equals + 1));
  }
  if (key === undefined) return { path, key };
  // A key is printable ASCII: anything else (a line break) could not go in the header it is sent in.
  if (!/^[\x21-\x7e]*$/.test(key)) {
    throw new GatewayError('invalid_query', 'The key query parameter is not an API key', { param: 'key' });
  }
  const query = kept.join('&');
  return { path: path.slice(0, mark) + (query ? `?${query}` : ''), key: key || undefined };
}

/** A query component as a form encodes it (`+` a space); a malformed escape is left as it came. */
function formDecoded(component: string): string {
  const spaced = component.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}
