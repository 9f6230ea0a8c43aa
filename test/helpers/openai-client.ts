/** The openai SDK as a gateway client: the gateway's admin key and a routing config, no SDK retries. */
import OpenAI from 'openai';
import type { TestGateway } from './gateway.js';

/** What a gateway client sends with every call: the admin key, `config`, and `headers` (which may replace them). */
export function gatewayHeaders(
  gateway: TestGateway,
  config: Record<string, unknown>,
  headers: Record<string, string> = {},
): Record<string, string> {
  return {
    'x-gateway-api-key': gateway.adminKey,
    'x-gateway-config': JSON.stringify(config),
    ...headers,
  };
}

export function gatewayOpenAI(
  gateway: TestGateway,
  config: Record<string, unknown>,
  headers: Record<string, string> = {},
): OpenAI {
  return new OpenAI({
    baseURL: gateway.url,
    apiKey: 'unused',
    maxRetries: 0,
    defaultHeaders: gatewayHeaders(gateway, config, headers),
  });
}
