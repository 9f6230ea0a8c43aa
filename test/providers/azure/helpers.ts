import type { AdapterRequest, ProviderTarget } from '../../../src/providers/types.js';

export function azureRequest(
  provider: 'azure-openai' | 'azure-ai',
  body: Record<string, unknown>,
  options: { endpoint?: AdapterRequest['endpoint']; strict?: boolean; target?: Partial<ProviderTarget> } = {},
): AdapterRequest {
  const defaults: Partial<ProviderTarget> =
    provider === 'azure-openai'
      ? { cloudd_resource_name: 'contoso', cloudd_deployment_name: 'gpt4o', cloudd_api_version: '2024-10-21' }
      : { cloudd_endpoint_name: 'my-llama', cloudd_region: 'eastus2', cloudd_deployment_type: 'serverless' };
  // The body reaches the adapter as the test wrote it, unvalidated: some are bodies the schema would refuse.
  return {
    endpoint: options.endpoint ?? 'chat',
    body,
    stream: body.stream === true,
    target: { provider, api_key: 'azure-test-key', ...defaults, ...options.target },
    forwardHeaders: {},
    clientHeaders: {},
    strictCompat: options.strict ?? false,
  } as AdapterRequest;
}
