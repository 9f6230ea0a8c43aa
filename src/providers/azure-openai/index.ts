/**
 * Azure OpenAI: OpenAI's wire format on per-deployment URLs
 * `{base}/openai/deployments/{deployment}/{chat/completions|completions|embeddings}?api-version=…`; the
 * Responses API natively on `{base}/openai/responses?api-version=…`.
 */
import {
  openAIAnswerUsage,
  openAIEventFailure,
  openAIResponsesOperation,
  toOpenAIBody,
} from '../openai/index.js';
import { ENDPOINT_PATHS } from '../shared/endpoint-paths.js';
import { joinUrl } from '../shared/url.js';
import type {
  EndpointKind,
  OperationHandler,
  ProviderAdapter,
  ProviderResourceApi,
  ProviderTarget,
  UpstreamRequest,
} from '../types.js';
import { withAzureApiVersion } from './azure-api-version.js';
import { azureAuthHeaders, azurePassthroughHeaders } from './azure-auth.js';
import { azureErrorFromResponse } from './azure-error.js';
import { azureFineTuningJob } from './azure-fine-tuning-job.js';
import { azureOpenAIBase, resolveAzureOpenAIAddress } from './azure-openai-address.js';
import { azureWireOperation } from './azure-wire-operation.js';

export { withAzureApiVersion } from './azure-api-version.js';
export { azureAuthHeaders, azurePassthroughHeaders } from './azure-auth.js';
export { normaliseAzureResponse, normaliseAzureChunk } from './normalise-azure-response.js';
export { azureErrorFromResponse } from './azure-error.js';
export { createAzureStreamTranslator } from './azure-stream-translator.js';
export { azureWireOperation } from './azure-wire-operation.js';

const PROVIDER = 'azure-openai';

/** The API version of Azure's Files, fine-tuning and Batch APIs when the target names none. */
export const AZURE_RESOURCES_API_VERSION = '2024-10-21';

/** The API version of the target's calls of Azure's Files, fine-tuning and Batch APIs. */
function resourcesApiVersion(target: ProviderTarget): string {
  return target.cloudd_api_version ?? target.api_version ?? AZURE_RESOURCES_API_VERSION;
}

/** A fine-tuning job's create takes `seed` from API version 2024-05-01-preview on (its reference's
 * FineTuningJobCreation is the first to list it; 2024-04-01-preview's and 2023-12-01-preview's list none),
 * and under the undated versions (`v1`, `preview`, `latest`). */
function createTakesSeed(target: ProviderTarget): boolean {
  const date = /^\d{4}-\d{2}-\d{2}/.exec(resourcesApiVersion(target))?.[0];
  return date === undefined || date >= '2024-05-01';
}

/** Azure OpenAI's Files, fine-tuning and Batch APIs: OpenAI's paths under `{base}/openai`, with the
 * target's API version (or a default that has all three). Pausing and resuming a job takes an API version
 * that has them (the v1 API, recent previews); Azure answers 404 under one that does not. */
const azureResources: ProviderResourceApi = {
  kinds: ['files', 'fine_tuning', 'fine_tuning_pause', 'batches'],
  buildRequest(req) {
    const url = joinUrl(azureOpenAIBase(req.target), `/openai${req.path}`);
    return {
      method: req.method,
      url: withAzureApiVersion(url, resourcesApiVersion(req.target)),
      headers: { ...req.headers, ...azureAuthHeaders(req.target, req.auth) },
      ...(req.body !== undefined && { body: req.body }),
    };
  },
  parseError: (res) => azureErrorFromResponse(PROVIDER, res),
  fineTuningJob: azureFineTuningJob,
  jobSeed: createTakesSeed,
  // Its references' examples of FineTuning_GetEvents and _GetCheckpoints run oldest first (2024-05-01-preview,
  // 2024-10-21); its v1 API's give none, and the gateway takes the order from the items' times there too.
  listsOldestFirst: true,
  // Azure's batch endpoint and input lines name the operation without the version: `/chat/completions`.
  batchEndpoint: (path) => path.replace(/^\/v1\//, '/'),
};

/**
 * The API version of a pass-through whose client named none, as the target's calls would have it: that of
 * the `deployments[]` entry the path names (`/deployments/{id}/…`), else the target's, else the default
 * entry's, else the default of Azure's own APIs — without one, Azure answers 404 "Resource not found".
 */
function passthroughApiVersion(target: ProviderTarget, path: string): string {
  const deployments = target.deployments ?? [];
  const named = /^\/deployments\/([^/?]+)/.exec(path)?.[1];
  const entry = named === undefined ? undefined : deployments.find((d) => d.deployment_id === decoded(named));
  return (
    entry?.api_version ??
    target.cloudd_api_version ??
    target.api_version ??
    deployments.find((d) => d.is_default === true)?.api_version ??
    AZURE_RESOURCES_API_VERSION
  );
}

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** `{base}/openai/deployments/{deployment}{path}?api-version=…`, the deployment picked by the model. */
function azureOpenAIOperation(endpoint: EndpointKind): OperationHandler {
  return azureWireOperation(PROVIDER, endpoint, (req) => {
    const address = resolveAzureOpenAIAddress(req.target, req.body.model);
    const path = `/openai/deployments/${encodeURIComponent(address.deployment)}${ENDPOINT_PATHS[endpoint]}`;
    return {
      method: 'POST',
      url: `${joinUrl(address.base, path)}?api-version=${encodeURIComponent(address.apiVersion)}`,
      headers: {
        ...req.forwardHeaders,
        'content-type': 'application/json',
        ...(req.stream ? { accept: 'text/event-stream' } : {}),
        ...azureAuthHeaders(req.target, req.auth),
      },
      body: toOpenAIBody(req),
    };
  });
}

/**
 * The Responses API on Azure OpenAI: `{base}/openai/responses?api-version=…` (one path for the resource,
 * not per deployment), the deployment named by the body's `model`. The API version is the target's, which
 * must be one that has the Responses API (`2025-03-01-preview` or later).
 */
const azureResponsesOperation = openAIResponsesOperation(PROVIDER, (req) => {
  const address = resolveAzureOpenAIAddress(req.target, req.body.model);
  return {
    method: 'POST',
    url: `${joinUrl(address.base, '/openai/responses')}?api-version=${encodeURIComponent(address.apiVersion)}`,
    headers: {
      ...req.forwardHeaders,
      'content-type': 'application/json',
      ...(req.stream ? { accept: 'text/event-stream' } : {}),
      ...azureAuthHeaders(req.target, req.auth),
    },
    body: JSON.stringify({ ...req.body, model: address.deployment }),
  };
});

export const azureOpenAIAdapter: ProviderAdapter = {
  id: PROVIDER,
  aliases: ['cloudd'],
  displayName: 'Azure OpenAI',
  capabilities: {
    endpoints: ['chat', 'completions', 'embeddings', 'responses'],
    streaming: true,
    tools: true,
    parallelToolCalls: true,
    images: true,
    jsonSchema: true,
    thinking: false,
    // OpenAI's bound, which Azure's chat API documents alike.
    stopSequences: 4,
    n: 'native',
    parameters: {
      '*': 'sent as given (OpenAI wire format)',
      model:
        'picks the deployment from `deployments[]` by alias; sent on (the deployment in the URL decides)',
      thinking: 'dropped: not an Azure OpenAI parameter (use reasoning_effort)',
    },
    credentials: [
      'api_key',
      'cloudd_resource_name',
      'resource_name',
      'cloudd_deployment_name',
      'cloudd_deployment_id',
      'deployment_id',
      'cloudd_api_version',
      'api_version',
      'deployments',
      'custom_host',
    ],
    notes: [
      'Auth: `api-key: <api_key>`; an api_key written `Bearer <token>`, or that is an Entra ID token (a JWT) itself, is sent as `Authorization: Bearer`.',
      'Content-filter results (prompt_filter_results, content_filter_results) are removed in strict mode.',
      "Azure's content_filter 400 keeps its status with code `content_filter`.",
    ],
  },

  operations: {
    chat: azureOpenAIOperation('chat'),
    completions: azureOpenAIOperation('completions'),
    embeddings: azureOpenAIOperation('embeddings'),
    responses: azureResponsesOperation,
  },

  parseError: (_req, res) => azureErrorFromResponse(PROVIDER, res),

  resources: azureResources,

  buildPassthrough(req): UpstreamRequest {
    // `/v1/<path>` at the gateway is `{base}/openai/<path>` at Azure; the API version is added when the
    // client did not give one.
    const headers = azurePassthroughHeaders(req.headers, req.target, req.auth);
    const url = joinUrl(azureOpenAIBase(req.target), `/openai${req.path}`);
    return {
      method: req.method,
      url: withAzureApiVersion(url, passthroughApiVersion(req.target, req.path)),
      headers,
      ...(req.body ? { body: req.body } : {}),
    };
  },

  passthroughUsage: openAIAnswerUsage,
  passthroughStreamFailure: openAIEventFailure(PROVIDER),
};
