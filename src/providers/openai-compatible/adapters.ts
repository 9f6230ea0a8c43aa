import { GatewayError } from '../../core/errors.js';
import {
  createOpenAIStreamTranslator,
  openAIErrorFromResponse,
  parseOpenAIResponse,
  toOpenAIBody,
} from '../openai/index.js';
import { joinUrl } from '../shared/url.js';
import type { EndpointKind, ProviderAdapter, ProviderCapabilities, ProviderTarget } from '../types.js';
import { OPENAI_COMPATIBLE_PROVIDERS, type OpenAICompatibleProvider } from './table.js';

const ENDPOINT_PATHS: Record<EndpointKind, string> = {
  chat: '/chat/completions',
  completions: '/completions',
  embeddings: '/embeddings',
};

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
  else if (entry.auth === 'bearer') {
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
    n: 'native',
    parameters: {
      '*': 'sent as given (OpenAI wire format)',
      thinking: entry.acceptsThinking ? 'sent as given' : 'dropped: not an OpenAI parameter',
    },
    credentials: entry.vendorHeaders
      ? ['api_key', 'custom_host', 'vendora_organization', 'vendora_project']
      : ['api_key', 'custom_host'],
    notes: entry.notes,
  };
}

export function createOpenAICompatibleAdapter(entry: OpenAICompatibleProvider): ProviderAdapter {
  const supported = new Set(entry.endpoints);
  return {
    id: entry.id,
    aliases: entry.aliases,
    displayName: entry.displayName,
    capabilities: capabilitiesOf(entry),
    buildRequest(req) {
      if (!supported.has(req.endpoint)) {
        throw new GatewayError(
          'unsupported_endpoint',
          `${entry.id} does not offer ${ENDPOINT_PATHS[req.endpoint]}`,
        );
      }
      return {
        method: 'POST',
        url: joinUrl(baseUrlOf(entry, req.target), ENDPOINT_PATHS[req.endpoint]),
        headers: {
          'content-type': 'application/json',
          ...authHeaders(entry, req.target),
          ...req.forwardHeaders,
        },
        body: toOpenAIBody(req, { acceptsThinking: entry.acceptsThinking }),
      };
    },
    parseResponse: (req, res) => parseOpenAIResponse(entry.id, req, res),
    createStreamTranslator: (req) => createOpenAIStreamTranslator(req, entry.id),
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
  };
}

export const openAICompatibleAdapters: ProviderAdapter[] = OPENAI_COMPATIBLE_PROVIDERS.map(
  createOpenAICompatibleAdapter,
);
