/** Where Cohere lives and how it is authenticated. */
import { GatewayError } from '../../core/errors.js';
import { joinUrl } from '../shared/url.js';
import type { ProviderTarget } from '../types.js';

export const COHERE_BASE_URL = 'https://api.cohere.com';

export const COHERE_PATHS = {
  chat: '/v2/chat',
  embeddings: '/v2/embed',
} as const;

/** `custom_host` replaces the scheme and host; Cohere's own path is kept. */
export function cohereUrl(target: ProviderTarget, path: string): string {
  return joinUrl(target.custom_host || COHERE_BASE_URL, path);
}

export function cohereHeaders(target: ProviderTarget): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (target.api_key) {
    headers.authorization = target.api_key.startsWith('Bearer ')
      ? target.api_key
      : `Bearer ${target.api_key}`;
  } else if (!target.custom_host) {
    // A self-hosted Cohere behind custom_host may need no key; Cohere's own API always does.
    throw new GatewayError('provider_config_error', 'Cohere needs an `api_key`.', { param: 'api_key' });
  }
  return headers;
}
