/**
 * Google Vertex AI (`cloudb`): Gemini models through the shared Gemini translation, Anthropic models
 * (`claude-*`) through the anthropic adapter's translation, both on Vertex's addresses and OAuth2 auth.
 */
import { GatewayError } from '../../core/errors.js';
import {
  anthropicErrorFromResponse,
  createAnthropicStreamTranslator,
  fromAnthropicResponse,
} from '../anthropic/index.js';
import {
  createGeminiStreamTranslator,
  fromGeminiResponse,
  geminiModelId,
  geminiStreamOptions,
  googleErrorFromResponse,
  toGeminiRequestBody,
  type GeminiGenerateContentResponse,
} from '../google/index.js';
import type { ChatRequest, EmbeddingRequest } from '../../core/openai-types.js';
import { joinUrl } from '../shared/url.js';
import type {
  AdapterRequest,
  ProviderAdapter,
  ProviderTarget,
  UpstreamErrorResponse,
  UpstreamRequest,
} from '../types.js';
import { isAnthropicModel, toVertexAnthropicBody, vertexAnthropicHeaders } from './vertex-ai-anthropic.js';
import { authenticateVertex } from './vertex-ai-auth.js';
import { vertexAICapabilities } from './vertex-ai-capabilities.js';
import {
  fromVertexEmbeddingResponse,
  toVertexEmbeddingBody,
  type VertexPredictEmbeddingResponse,
} from './vertex-ai-embeddings.js';
import { vertexBaseUrl, vertexModelUrl } from './vertex-ai-urls.js';

export { authenticateVertex, clearVertexTokenCache, CLOUD_PLATFORM_SCOPE } from './vertex-ai-auth.js';
export { vertexBaseUrl, vertexModelUrl } from './vertex-ai-urls.js';
export { VERTEX_ANTHROPIC_VERSION, isAnthropicModel } from './vertex-ai-anthropic.js';

const PROVIDER = 'vertex-ai';

function bearer(req: { target: ProviderTarget; auth?: AdapterRequest['auth'] }): Record<string, string> {
  const token =
    req.auth?.accessToken ?? (req.target.cloudb_service_account_json ? undefined : req.target.api_key);
  if (token) return { authorization: `Bearer ${token}` };
  if (req.target.custom_host) return {};
  throw new GatewayError(
    'provider_config_error',
    'vertex-ai needs cloudb_service_account_json or an access token in api_key',
    { param: 'cloudb_service_account_json' },
  );
}

function modelOf(req: AdapterRequest): string {
  return geminiModelId(String((req.body as { model?: unknown }).model ?? ''));
}

function isAnthropicRequest(req: AdapterRequest): boolean {
  return req.endpoint === 'chat' && isAnthropicModel(modelOf(req));
}

/** Vertex answers Anthropic calls with Anthropic's error shape, and its own failures with Google's. */
function isGoogleErrorBody(res: UpstreamErrorResponse): boolean {
  try {
    const parsed: unknown = JSON.parse(res.bodyText);
    const body = (Array.isArray(parsed) ? parsed[0] : parsed) as {
      error?: { status?: unknown; code?: unknown };
    };
    return typeof body?.error?.status === 'string' || typeof body?.error?.code === 'number';
  } catch {
    return false;
  }
}

export const vertexAIAdapter: ProviderAdapter = {
  id: PROVIDER,
  aliases: ['cloudb', 'vertex', 'google-vertex'],
  displayName: 'Google Vertex AI',
  capabilities: vertexAICapabilities,

  authenticate(target, signal) {
    return authenticateVertex(target, signal);
  },

  buildRequest(req): UpstreamRequest {
    const model = modelOf(req);
    const headers = { 'content-type': 'application/json', ...req.forwardHeaders, ...bearer(req) };
    if (req.endpoint === 'embeddings') {
      const url = vertexModelUrl(req.target, 'google', model, 'predict');
      return {
        method: 'POST',
        url,
        headers,
        body: JSON.stringify(toVertexEmbeddingBody(req.body as EmbeddingRequest)),
      };
    }
    if (req.endpoint !== 'chat') {
      throw new GatewayError('unsupported_endpoint', `${req.endpoint} is not supported by vertex-ai`);
    }
    if (isAnthropicModel(model)) {
      const url = vertexModelUrl(
        req.target,
        'anthropic',
        model,
        req.stream ? 'streamRawPredict' : 'rawPredict',
      );
      return {
        method: 'POST',
        url,
        headers: { ...headers, ...vertexAnthropicHeaders(req) },
        body: JSON.stringify(toVertexAnthropicBody(req)),
      };
    }
    const action = req.stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
    const url = vertexModelUrl(req.target, 'google', model, action);
    const payload = toGeminiRequestBody(req.body as ChatRequest, {
      provider: PROVIDER,
      strictCompat: req.strictCompat,
    });
    return { method: 'POST', url, headers, body: JSON.stringify(payload) };
  },

  parseResponse(req, res) {
    if (req.endpoint === 'embeddings') {
      return fromVertexEmbeddingResponse(
        res.body as VertexPredictEmbeddingResponse,
        req.body as EmbeddingRequest,
      );
    }
    if (isAnthropicRequest(req)) return fromAnthropicResponse(req, res.body, modelOf(req), PROVIDER);
    return fromGeminiResponse(res.body as GeminiGenerateContentResponse, {
      provider: PROVIDER,
      model: modelOf(req),
      strictCompat: req.strictCompat,
    });
  },

  createStreamTranslator(req) {
    if (isAnthropicRequest(req)) return createAnthropicStreamTranslator(req, PROVIDER);
    return createGeminiStreamTranslator(geminiStreamOptions(req, PROVIDER));
  },

  parseError(req, res) {
    if (isAnthropicRequest(req) && !isGoogleErrorBody(res)) return anthropicErrorFromResponse(PROVIDER, res);
    return googleErrorFromResponse(PROVIDER, res);
  },

  buildPassthrough(req): UpstreamRequest {
    const headers: Record<string, string> = { ...req.headers };
    delete headers.authorization;
    const request: UpstreamRequest = {
      method: req.method,
      url: joinUrl(joinUrl(vertexBaseUrl(req.target), '/v1'), req.path),
      headers: { ...headers, ...bearer(req) },
    };
    if (req.body !== undefined) request.body = req.body;
    return request;
  },
};
