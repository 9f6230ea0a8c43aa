/** The Amazon Bedrock adapter: Converse / ConverseStream for chat, InvokeModel for embeddings. */
import { GatewayError } from '../../core/errors.js';
import type { ChatRequest, EmbeddingRequest } from '../../core/openai-types.js';
import type { AdapterRequest, ProviderAdapter, UpstreamRequest } from '../types.js';
import { joinUrl } from '../shared/url.js';
import { bedrockCapabilities } from './bedrock-capabilities.js';
import { bedrockRuntimeBaseUrl } from './bedrock-config.js';
import { toBedrockConverseBody } from './bedrock-converse-body.js';
import { fromBedrockEmbeddingResponse, toBedrockEmbeddingBody } from './bedrock-embeddings.js';
import { bedrockErrorFromResponse } from './bedrock-error.js';
import { createBedrockEventStreamDecoder } from './bedrock-event-stream-decoder.js';
import { fromBedrockConverseResponse } from './bedrock-response.js';
import { signBedrockRequest } from './bedrock-sign.js';
import { createBedrockStreamTranslator } from './bedrock-stream-translator.js';
import { bedrockCredentials } from './bedrock-target.js';

export { toBedrockConverseBody } from './bedrock-converse-body.js';
export { fromBedrockConverseResponse } from './bedrock-response.js';
export { createBedrockStreamTranslator } from './bedrock-stream-translator.js';
export { createBedrockEventStreamDecoder } from './bedrock-event-stream-decoder.js';
export { bedrockErrorFromResponse } from './bedrock-error.js';
export { signBedrockRequest } from './bedrock-sign.js';
export { bedrockCapabilities } from './bedrock-capabilities.js';

function modelPath(model: unknown, action: string): string {
  if (typeof model !== 'string' || model === '') {
    throw new GatewayError('invalid_body', 'model is required', { param: 'model' });
  }
  return `/model/${encodeURIComponent(model)}/${action}`;
}

function baseUrl(req: { target: AdapterRequest['target'] }, region: string): string {
  return req.target.custom_host ?? bedrockRuntimeBaseUrl(region);
}

export const bedrockAdapter: ProviderAdapter = {
  id: 'bedrock',
  aliases: ['cloudc'],
  displayName: 'Amazon Bedrock',
  capabilities: bedrockCapabilities,

  async buildRequest(req) {
    const credentials = bedrockCredentials(req.target);
    let path: string;
    let body: Record<string, unknown>;
    const headers: Record<string, string> = { ...req.forwardHeaders, 'content-type': 'application/json' };
    if (req.endpoint === 'chat') {
      body = toBedrockConverseBody(req.body as ChatRequest);
      path = modelPath(req.body.model, req.stream ? 'converse-stream' : 'converse');
      if (req.stream) headers.accept = 'application/vnd.amazon.eventstream';
      else headers.accept = 'application/json';
    } else if (req.endpoint === 'embeddings') {
      body = toBedrockEmbeddingBody(req.body as EmbeddingRequest);
      path = modelPath(req.body.model, 'invoke');
      headers.accept = 'application/json';
    } else {
      throw new GatewayError('unsupported_endpoint', `bedrock does not support the ${req.endpoint} endpoint`);
    }
    const request: UpstreamRequest = {
      method: 'POST',
      url: joinUrl(baseUrl(req, credentials.region), path),
      headers,
      body: JSON.stringify(body),
    };
    return signBedrockRequest(request, credentials);
  },

  parseResponse(req, res) {
    if (req.endpoint === 'embeddings')
      return fromBedrockEmbeddingResponse(req.body as EmbeddingRequest, res.body, res.headers);
    return fromBedrockConverseResponse(req, res.body);
  },

  createFrameDecoder: createBedrockEventStreamDecoder,

  createStreamTranslator(req) {
    return createBedrockStreamTranslator(req);
  },

  parseError(_req, res) {
    return bedrockErrorFromResponse('bedrock', res);
  },

  async buildPassthrough(req) {
    const credentials = bedrockCredentials(req.target);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (!['authorization', 'host', 'content-length', 'x-amz-date', 'x-amz-security-token'].includes(name)) {
        headers[name] = value;
      }
    }
    return signBedrockRequest(
      {
        method: req.method,
        url: joinUrl(baseUrl(req, credentials.region), req.path),
        headers,
        ...(req.body ? { body: req.body } : {}),
      },
      credentials,
    );
  },
};
