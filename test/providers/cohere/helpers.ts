import type { AdapterRequest, ProviderTarget } from '../../../src/providers/types.js';

export function cohereRequest(
  body: Record<string, unknown>,
  options: { endpoint?: AdapterRequest['endpoint']; strict?: boolean; target?: Partial<ProviderTarget> } = {},
): AdapterRequest {
  return {
    endpoint: options.endpoint ?? 'chat',
    body,
    stream: body.stream === true,
    target: { provider: 'cohere', api_key: 'co-test-key', ...options.target },
    forwardHeaders: {},
    clientHeaders: {},
    strictCompat: options.strict ?? false,
  };
}
