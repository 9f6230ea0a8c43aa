import { GatewayError } from '../../core/errors.js';
import {
  openAIAnswerUsage,
  openAIErrorFromResponse,
  openAIEventFailure,
  openAIResponsesOperation,
  openAIWireOperation,
  toOpenAIBody,
} from '../openai/index.js';
import { ENDPOINT_PATHS } from '../shared/endpoint-paths.js';
import { joinUrl } from '../shared/url.js';
import type {
  AdapterRequest,
  EndpointKind,
  OperationHandler,
  ProviderAdapter,
  ProviderCapabilities,
  ProviderResourceApi,
  ProviderTarget,
} from '../types.js';
import { withNineCharacterToolCallIds } from './nine-character-tool-call-ids.js';
import { withUserTurnLast } from './user-turn-last.js';
import { OPENAI_COMPATIBLE_PROVIDERS, type OpenAICompatibleProvider } from './table.js';

function baseUrlOf(entry: OpenAICompatibleProvider, target: ProviderTarget): string {
  const base = target.custom_host ?? entry.baseUrl;
  if (!base) {
    throw new GatewayError('provider_config_error', `${entry.id} needs custom_host: the server's base URL`, {
      param: 'custom_host',
    });
  }
  return base;
}

function authHeaders(entry: OpenAICompatibleProvider, target: ProviderTarget): Record<string, string> {
  const headers: Record<string, string> = {};
  if (target.api_key) headers.authorization = `Bearer ${target.api_key}`;
  // Behind a custom_host (a local vLLM, a proxy of one's own) a key is the server's business: the call
  // goes out without one, and a server that wants one refuses it itself.
  else if (entry.auth === 'bearer' && target.custom_host === undefined) {
    throw new GatewayError(
      'provider_config_error',
      `${entry.id} needs an API key (api_key or Authorization)`,
      {
        param: 'api_key',
      },
    );
  }
  if (entry.vendorHeaders) {
    if (target.vendora_organization) headers['openai-organization'] = target.vendora_organization;
    if (target.vendora_project) headers['openai-project'] = target.vendora_project;
  }
  return headers;
}

function capabilitiesOf(entry: OpenAICompatibleProvider): ProviderCapabilities {
  return {
    endpoints: entry.endpoints,
    streaming: true,
    tools: true,
    parallelToolCalls: true,
    images: true,
    jsonSchema: true,
    thinking: entry.acceptsThinking ?? false,
    n: entry.oneChoice ? 'fanout' : 'native',
    ...(entry.embeddingInputsPerCall && { embeddingInputsPerCall: () => entry.embeddingInputsPerCall }),
    ...(entry.embeddingTokensPerCall && { embeddingTokensPerCall: () => entry.embeddingTokensPerCall }),
    ...(entry.stopSequences && { stopSequences: entry.stopSequences }),
    parameters: {
      '*': 'sent as given (OpenAI wire format)',
      thinking: entry.acceptsThinking ? 'sent as given' : 'dropped: not an OpenAI parameter',
      ...(entry.maxCompletionTokens
        ? {}
        : {
            max_completion_tokens: '→ max_tokens (wins over max_tokens): the provider knows only max_tokens',
          }),
      ...entry.omits,
      ...Object.fromEntries(
        Object.entries(entry.renames ?? {}).map(([field, name]) => [
          field,
          `→ ${name}, the provider's name for it`,
        ]),
      ),
      ...(entry.nineCharacterToolCallIds && {
        tool_call_id:
          'sent as 9 letters or digits (made from its hash) when it is not, as the provider requires',
      }),
      ...(entry.userTurnLast && {
        messages:
          'sent as given; one that ends with the assistant (unless marked prefix: true) or a system message gets a user turn "Please continue." after it, as the provider serves only a conversation that ends with the user or a tool result',
      }),
    },
    credentials: entry.vendorHeaders
      ? ['api_key', 'custom_host', 'vendora_organization', 'vendora_project']
      : ['api_key', 'custom_host'],
    notes: entry.notes,
  };
}

/**
 * The chat request's messages as the entry's provider takes them: tool call ids of 9 characters, a user turn
 * last; the same request when they need no change.
 */
function withMessagesFitted(entry: OpenAICompatibleProvider, req: AdapterRequest): AdapterRequest {
  if (req.endpoint !== 'chat') return req;
  const messages = (req.body as { messages?: unknown }).messages;
  let fitted = entry.nineCharacterToolCallIds ? withNineCharacterToolCallIds(messages) : messages;
  if (entry.userTurnLast) fitted = withUserTurnLast(fitted);
  return fitted === messages ? req : ({ ...req, body: { ...req.body, messages: fitted } } as AdapterRequest);
}

/** The entry's handler for one of its `endpoints`: the OpenAI path on the entry's base URL. The Responses
 * API is its own operation: the provider's Response object and events, relayed. */
function operationFor(entry: OpenAICompatibleProvider, endpoint: EndpointKind): OperationHandler {
  const omit = Object.keys(entry.omits ?? {});
  const buildRequest: OperationHandler['buildRequest'] = (req) => ({
    method: 'POST',
    url: joinUrl(baseUrlOf(entry, req.target), ENDPOINT_PATHS[endpoint]),
    headers: {
      'content-type': 'application/json',
      ...authHeaders(entry, req.target),
      ...req.forwardHeaders,
    },
    body: toOpenAIBody(withMessagesFitted(entry, req), {
      acceptsThinking: entry.acceptsThinking,
      maxTokensOnly: !entry.maxCompletionTokens,
      omit,
      renames: entry.renames,
    }),
  });
  if (endpoint === 'responses') return openAIResponsesOperation(entry.id, buildRequest) as OperationHandler;
  return openAIWireOperation(entry.id, endpoint, buildRequest);
}

/** OpenAI's Files, fine-tuning and Batch APIs on the entry's base URL, where the entry has them. */
function resourcesOf(entry: OpenAICompatibleProvider): ProviderResourceApi | undefined {
  if (!entry.resources?.length) return undefined;
  return {
    kinds: entry.resources,
    jobMetadata: true,
    buildRequest: (req) => ({
      method: req.method,
      url: joinUrl(baseUrlOf(entry, req.target), req.path),
      headers: { ...req.headers, ...authHeaders(entry, req.target) },
      ...(req.body !== undefined && { body: req.body }),
    }),
    parseError: (res) => openAIErrorFromResponse(entry.id, res),
  };
}

export function createOpenAICompatibleAdapter(entry: OpenAICompatibleProvider): ProviderAdapter {
  const resources = resourcesOf(entry);
  return {
    ...(resources && { resources }),
    id: entry.id,
    aliases: entry.aliases,
    displayName: entry.displayName,
    capabilities: capabilitiesOf(entry),
    operations: Object.fromEntries(
      entry.endpoints.map((endpoint) => [endpoint, operationFor(entry, endpoint)]),
    ),
    parseError: (_req, res) => openAIErrorFromResponse(entry.id, res),
    buildPassthrough(req) {
      const headers: Record<string, string> = { ...req.headers };
      if (req.target.api_key || entry.auth === 'bearer')
        Object.assign(headers, authHeaders(entry, req.target));
      return {
        method: req.method,
        url: joinUrl(baseUrlOf(entry, req.target), req.path),
        headers,
        body: req.body,
      };
    },
    passthroughUsage: openAIAnswerUsage,
    passthroughStreamFailure: openAIEventFailure(entry.id),
  };
}

export const openAICompatibleAdapters: ProviderAdapter[] = OPENAI_COMPATIBLE_PROVIDERS.map(
  createOpenAICompatibleAdapter,
);
