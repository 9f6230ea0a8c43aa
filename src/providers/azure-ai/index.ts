/**
 * Azure AI Foundry / Azure AI model inference: models hosted on serverless or managed endpoints,
 * speaking OpenAI's wire format. Foundry's Claude models speak Anthropic's Messages format instead
 * (`/anthropic/v1/messages`), reached by a pass-through only.
 */
import { GatewayError } from '../../core/errors.js';
import {
  azureAuthHeaders,
  azureErrorFromResponse,
  azurePassthroughHeaders,
  azureWireOperation,
  withAzureApiVersion,
} from '../azure-openai/index.js';
import { openAIAnswerUsage, toOpenAIBody } from '../openai/index.js';
import { ENDPOINT_PATHS } from '../shared/endpoint-paths.js';
import { joinUrl } from '../shared/url.js';
import type {
  EndpointKind,
  OperationHandler,
  ProviderAdapter,
  ProviderTarget,
  UpstreamRequest,
} from '../types.js';
import {
  AZURE_AI_DEFAULT_API_VERSION,
  azureAIApiVersion,
  azureAIBase,
  azureAIDeploymentType,
  azureAIRoute,
} from './azure-ai-address.js';
import { azureAIEventFailure } from './azure-ai-stream-failure.js';

const PROVIDER = 'azure-ai';

function routingHeaders(target: ProviderTarget): Record<string, string> {
  // Extra OpenAI parameters (parallel_tool_calls, user…) go on to the model instead of failing the call.
  const headers: Record<string, string> = { 'extra-parameters': 'pass-through' };
  if (target.cloudd_deployment_name) headers['azureml-model-deployment'] = target.cloudd_deployment_name;
  return headers;
}

/** Managed endpoints take no api-version; serverless ones get the target's unless the URL has one (or is
 * of Azure's v1 API). */
function withApiVersion(url: string, target: ProviderTarget): string {
  if (azureAIDeploymentType(target) === 'managed') return url;
  return withAzureApiVersion(url, azureAIApiVersion(target));
}

/** The deployment's route for the operation; a managed deployment scores chat only. */
function azureAIOperation(endpoint: EndpointKind): OperationHandler {
  return azureWireOperation(PROVIDER, endpoint, (req) => {
    const route = azureAIRoute(req.target, endpoint);
    if (!route) {
      throw new GatewayError(
        'unsupported_endpoint',
        `Azure AI ${azureAIDeploymentType(req.target)} deployments do not offer ${ENDPOINT_PATHS[endpoint]}.`,
      );
    }
    return {
      method: 'POST',
      url: withApiVersion(joinUrl(azureAIBase(req.target), route), req.target),
      headers: {
        ...req.forwardHeaders,
        'content-type': 'application/json',
        ...(req.stream ? { accept: 'text/event-stream' } : {}),
        ...routingHeaders(req.target),
        ...azureAuthHeaders(req.target, req.auth, 'bearer'),
      },
      body: toOpenAIBody(req),
    };
  });
}

export const azureAIAdapter: ProviderAdapter = {
  id: PROVIDER,
  aliases: ['azure-ai-inference'],
  displayName: 'Azure AI (model inference)',
  capabilities: {
    endpoints: ['chat', 'embeddings'],
    streaming: true,
    tools: true,
    parallelToolCalls: true,
    images: true,
    jsonSchema: true,
    thinking: true,
    n: 'native',
    parameters: {
      '*': 'sent as given (OpenAI wire format), with `extra-parameters: pass-through`',
      thinking:
        "dropped: not a model inference parameter; a model's reasoning_content comes back as content_blocks",
    },
    credentials: [
      'api_key',
      'cloudd_endpoint_name',
      'cloudd_region',
      'cloudd_deployment_type',
      'cloudd_deployment_name',
      'cloudd_api_version',
      'custom_host',
    ],
    notes: [
      'serverless: https://{cloudd_endpoint_name}.{cloudd_region}.models.ai.azure.com/chat/completions?api-version=…',
      'managed: https://{cloudd_endpoint_name}.{cloudd_region}.inference.ml.azure.com/score (chat only)',
      'Auth: `Authorization: Bearer <api_key>`; cloudd_deployment_name → `azureml-model-deployment`.',
      `api-version defaults to ${AZURE_AI_DEFAULT_API_VERSION} (cloudd_api_version overrides).`,
    ],
  },

  operations: { chat: azureAIOperation('chat'), embeddings: azureAIOperation('embeddings') },

  parseError: (_req, res) => azureErrorFromResponse(PROVIDER, res),

  buildPassthrough(req): UpstreamRequest {
    const headers = azurePassthroughHeaders(req.headers, req.target, req.auth, 'bearer');
    if (req.target.cloudd_deployment_name)
      headers['azureml-model-deployment'] = req.target.cloudd_deployment_name;
    const url = withApiVersion(joinUrl(azureAIBase(req.target), req.path), req.target);
    return { method: req.method, url, headers, ...(req.body ? { body: req.body } : {}) };
  },

  passthroughUsage: openAIAnswerUsage,
  // Anthropic's error event in a Claude model's Messages stream, an OpenAI-wire error in any other's.
  passthroughStreamFailure: azureAIEventFailure(PROVIDER),
};
