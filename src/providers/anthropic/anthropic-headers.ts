import { GatewayError } from '../../core/errors.js';
import type { ProviderTarget } from '../types.js';
import { ANTHROPIC_DEFAULT_VERSION } from './anthropic-config.js';

function headerValue(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(',') : value;
}

/**
 * The headers of a Messages API call: the key, the API version (the client's `anthropic-version` wins over
 * the default) and the client's `anthropic-beta` flags, passed on as they are.
 */
export function anthropicHeaders(
  target: ProviderTarget,
  clientHeaders: Record<string, string | string[] | undefined>,
): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'anthropic-version': headerValue(clientHeaders['anthropic-version']) ?? ANTHROPIC_DEFAULT_VERSION,
  };
  if (target.api_key) headers['x-api-key'] = target.api_key;
  else if (!target.custom_host) {
    throw new GatewayError('provider_config_error', 'anthropic needs api_key', { param: 'api_key' });
  }
  const beta = headerValue(clientHeaders['anthropic-beta']);
  if (beta) headers['anthropic-beta'] = beta;
  return headers;
}
