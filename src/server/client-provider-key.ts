/**
 * A client's provider key sent where its provider's own SDK puts it: `x-api-key` (Anthropic), `api-key`
 * (Azure), `x-goog-api-key` (Gemini). Read as the key `Authorization: Bearer` carries on the OpenAI routes:
 * the key of a target that has none of its own, which the target's adapter sends in its provider's header.
 * Never forwarded as it came: a target of another provider (or with a key of its own) must not receive it.
 */
import { headerValue, type RequestContext } from '../gateway/context.js';

export const PROVIDER_KEY_HEADERS = ['x-api-key', 'api-key', 'x-goog-api-key'] as const;

/** The request's context with the first of `names` present read as `Authorization: Bearer`, when the
 * request has no Authorization of its own. */
export function withClientProviderKey(
  gw: RequestContext,
  names: readonly string[] = PROVIDER_KEY_HEADERS,
): RequestContext {
  if (headerValue(gw.headers, 'authorization')) return gw;
  for (const name of names) {
    const key = headerValue(gw.headers, name);
    if (key) return { ...gw, headers: { ...gw.headers, authorization: `Bearer ${key}` } };
  }
  return gw;
}
