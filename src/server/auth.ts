/**
 * `x-gateway-api-key` on every /v1 endpoint: the key is looked up (through the in-memory cache), must be
 * active and unexpired, and gives the request its workspace and role.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { HEADERS, headerValue } from '../gateway/context.js';
import { GatewayError } from '../core/errors.js';
import type { Lookups } from '../gateway/lookups.js';
import type { ApiKey, Role } from '../store/types.js';

/**
 * The request's key, checked. From the lookup cache it is found and checked at once, with no promise (this
 * runs for every request); a key that must be loaded first comes as a promise.
 */
export function authenticate(headers: IncomingHttpHeaders, lookups: Lookups): ApiKey | Promise<ApiKey> {
  const value = headerValue(headers, HEADERS.apiKey);
  if (!value) {
    throw new GatewayError('missing_api_key', `Send your gateway API key in the ${HEADERS.apiKey} header`, {
      param: HEADERS.apiKey,
    });
  }
  if (value.length > 512) {
    throw new GatewayError('invalid_api_key', 'The gateway API key is not valid', { param: HEADERS.apiKey });
  }
  const cached = lookups.cachedApiKey(value);
  if (cached !== undefined) return usableKey(lookups, cached ?? undefined);
  return lookups.apiKey(value).then((key) => usableKey(lookups, key));
}

function usableKey(lookups: Lookups, key: ApiKey | undefined): ApiKey {
  if (!key || key.status !== 'active') {
    throw new GatewayError('invalid_api_key', 'The gateway API key is not valid or has been revoked', {
      param: HEADERS.apiKey,
    });
  }
  if (key.expires_at !== null && key.expires_at * 1000 <= Date.now()) {
    throw new GatewayError('invalid_api_key', 'The gateway API key has expired', { param: HEADERS.apiKey });
  }
  lookups.keyUsed(key);
  return key;
}

export function requireRole(key: ApiKey, role: Role): void {
  if (role === 'admin' && key.role !== 'admin') {
    throw new GatewayError('forbidden', 'This needs an admin API key');
  }
}
