/**
 * Where an Azure AI model inference call goes. A serverless deployment (models as a service) is
 * `https://{endpoint}.{region}.models.ai.azure.com` with the model inference routes (`/chat/completions`,
 * `/embeddings`, `?api-version=`); a managed online endpoint is
 * `https://{endpoint}.{region}.inference.ml.azure.com` and scores chat at `/score`.
 */
import { GatewayError } from '../../core/errors.js';
import { hostLabel } from '../azure-openai/azure-openai-address.js';
import type { EndpointKind, ProviderTarget } from '../types.js';

/** The model inference API version used when the target names none. */
export const AZURE_AI_DEFAULT_API_VERSION = '2024-05-01-preview';

const ROUTES: Record<'serverless' | 'managed', Partial<Record<EndpointKind, string>>> = {
  serverless: { chat: '/chat/completions', embeddings: '/embeddings' },
  managed: { chat: '/score' },
};

export function azureAIDeploymentType(target: ProviderTarget): 'serverless' | 'managed' {
  return target.cloudd_deployment_type ?? 'serverless';
}

export function azureAIBase(target: ProviderTarget): string {
  if (target.custom_host) return target.custom_host;
  const endpoint = target.cloudd_endpoint_name;
  if (!endpoint) {
    throw new GatewayError('provider_config_error', 'Azure AI needs `cloudd_endpoint_name`.', {
      param: 'cloudd_endpoint_name',
    });
  }
  const region = target.cloudd_region;
  if (!region) {
    throw new GatewayError('provider_config_error', 'Azure AI needs `cloudd_region`.', {
      param: 'cloudd_region',
    });
  }
  const host = azureAIDeploymentType(target) === 'managed' ? 'inference.ml.azure.com' : 'models.ai.azure.com';
  const endpointLabel = hostLabel(endpoint, 'cloudd_endpoint_name', 'an Azure endpoint name');
  return `https://${endpointLabel}.${hostLabel(region, 'cloudd_region', 'an Azure region name')}.${host}`;
}

/** The route of an endpoint for this deployment type, or undefined when the deployment type has none. */
export function azureAIRoute(target: ProviderTarget, endpoint: EndpointKind): string | undefined {
  return ROUTES[azureAIDeploymentType(target)][endpoint];
}

export function azureAIApiVersion(target: ProviderTarget): string {
  return target.cloudd_api_version ?? target.api_version ?? AZURE_AI_DEFAULT_API_VERSION;
}
