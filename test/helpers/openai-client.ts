/** The openai SDK as a gateway client: the gateway's admin key and a routing config, no SDK retries. */
import OpenAI from 'openai';
import type { TestGateway } from './gateway.js';

export function gatewayOpenAI(gateway: TestGateway, config: Record<string, unknown>): OpenAI {
  return new OpenAI({
    baseURL: gateway.url,
    apiKey: 'unused',
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-config': JSON.stringify(config) },
  });
}
