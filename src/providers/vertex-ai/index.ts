/**
 * Google Vertex AI (`cloudb`): Gemini models through the shared Gemini translation, Anthropic models
 * (`claude-*`, `anthropic.claude-*`) through the anthropic adapter's translation, both on Vertex's
 * addresses and OAuth2 auth.
 */
import {
  anthropicErrorFromResponse,
  anthropicEventFailure,
  messagesAnswerUsage,
} from '../anthropic/index.js';
import { geminiAnswerUsage, geminiEventFailure, googleErrorFromResponse } from '../google/index.js';
import { firstFailure } from '../shared/stream-failure.js';
import { firstUsage, openAIChatUsage } from '../shared/answer-usage.js';
import { joinUrl } from '../shared/url.js';
import type { AdapterRequest, ProviderAdapter, UpstreamErrorResponse, UpstreamRequest } from '../types.js';
import { isAnthropicModel } from './vertex-ai-anthropic.js';
import { authenticateVertex } from './vertex-ai-auth.js';
import { vertexBearer } from './vertex-ai-bearer.js';
import { vertexAICapabilities } from './vertex-ai-capabilities.js';
import {
  VERTEX_PROVIDER,
  vertexChatOperation,
  vertexEmbeddingsOperation,
  vertexModelOf,
} from './vertex-ai-operations.js';
import { vertexMessagesOperation } from './vertex-ai-messages-operation.js';
import { refuseOtherProjectInBody } from './vertex-ai-body-projects.js';
import { refuseOtherProject } from './vertex-ai-passthrough-project.js';
import { vertexRequestTypeHeaders } from './vertex-ai-request-type.js';
import { vertexBaseUrl } from './vertex-ai-urls.js';

export { authenticateVertex, clearVertexTokenCache, CLOUD_PLATFORM_SCOPE } from './vertex-ai-auth.js';
export { VERTEX_GLOBAL_REGION, vertexBaseUrl, vertexModelUrl } from './vertex-ai-urls.js';
export {
  sharedRequestTypeRefusal,
  type SharedRequestTypeRefusal,
  type VertexCapacity,
} from './vertex-ai-request-type.js';
export { VERTEX_ANTHROPIC_VERSION, isAnthropicModel } from './vertex-ai-anthropic.js';

function isAnthropicRequest(req: AdapterRequest): boolean {
  return req.endpoint === 'chat' && isAnthropicModel(vertexModelOf(req));
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
  id: VERTEX_PROVIDER,
  aliases: ['cloudb', 'vertex', 'google-vertex'],
  displayName: 'Google Vertex AI',
  capabilities: vertexAICapabilities,

  authenticate(target, signal, sender) {
    return authenticateVertex(target, signal, sender);
  },

  operations: {
    chat: vertexChatOperation,
    embeddings: vertexEmbeddingsOperation,
    messages: vertexMessagesOperation,
  },

  parseError(req, res) {
    if (isAnthropicRequest(req) && !isGoogleErrorBody(res))
      return anthropicErrorFromResponse(VERTEX_PROVIDER, res);
    return googleErrorFromResponse(VERTEX_PROVIDER, res);
  },

  refusePassthrough: refuseOtherProject,
  refuseStoredPassthroughBody: refuseOtherProjectInBody,

  buildPassthrough(req): UpstreamRequest {
    const headers: Record<string, string> = { ...req.headers };
    delete headers.authorization;
    const request: UpstreamRequest = {
      method: req.method,
      url: joinUrl(joinUrl(vertexBaseUrl(req.target), '/v1'), req.path),
      headers: { ...headers, ...vertexRequestTypeHeaders(req.target), ...vertexBearer(req) },
    };
    if (req.body !== undefined) request.body = req.body;
    return request;
  },

  // Gemini's generateContent, Anthropic's rawPredict (a Message), and the OpenAI-compatible endpoint.
  passthroughUsage: firstUsage(geminiAnswerUsage, messagesAnswerUsage, openAIChatUsage),
  // Anthropic's error event in a Claude stream (streamRawPredict), Google's error object in a Gemini one
  // (streamGenerateContent?alt=sse). Anthropic's is read first: its event carries an `error` object too.
  passthroughStreamFailure: firstFailure(
    anthropicEventFailure(VERTEX_PROVIDER),
    geminiEventFailure(VERTEX_PROVIDER),
  ),
};
