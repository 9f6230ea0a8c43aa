/** The Anthropic SDK as a gateway client (/v1/messages): the gateway's admin key and a routing config, no SDK retries. */
import Anthropic from '@anthropic-ai/sdk';
import type { TestGateway } from './gateway.js';
import { gatewayHeaders } from './openai-client.js';

/** `headers` are sent besides (and may replace) the key and the config. */
export function gatewayAnthropic(
  gateway: TestGateway,
  config: Record<string, unknown>,
  headers: Record<string, string> = {},
): Anthropic {
  return new Anthropic({
    baseURL: gateway.origin,
    apiKey: 'unused',
    maxRetries: 0,
    defaultHeaders: gatewayHeaders(gateway, config, headers),
  });
}
