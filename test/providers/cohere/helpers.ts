import type { AdapterRequest, ProviderTarget } from '../../../src/providers/types.js';

export function cohereRequest(
  body: Record<string, unknown>,
  options: { endpoint?: AdapterRequest['endpoint']; strict?: boolean; target?: Partial<ProviderTarget> } = {},
): AdapterRequest {
  // The body reaches the adapter as the test wrote it, unvalidated: some are bodies the schema would refuse.
  return {
    endpoint: options.endpoint ?? 'chat',
    body,
    stream: body.stream === true,
    target: { provider: 'cohere', api_key: 'co-test-key', ...options.target },
    forwardHeaders: {},
    clientHeaders: {},
    strictCompat: options.strict ?? false,
  } as AdapterRequest;
}
