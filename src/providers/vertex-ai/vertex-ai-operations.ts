/**
 * Vertex AI's operations. Chat goes to the model's publisher: Anthropic models (`claude-…`, also written
 * `anthropic.claude-…`) through the anthropic adapter's Messages translation (`rawPredict` /
 * `streamRawPredict`), every other model through the shared Gemini translation (`generateContent` /
 * `streamGenerateContent`). Embeddings use `predict`, or `embedContent` for the Gemini embedding models after
 * gemini-embedding-001.
 */
import { createAnthropicStreamTranslator, fromAnthropicResponse } from '../anthropic/index.js';
import {
  createGeminiStreamTranslator,
  fromGeminiResponse,
  geminiStreamOptions,
  toGeminiRequestBody,
  usesLegacyFunctions,
  type GeminiGenerateContentResponse,
} from '../google/index.js';
import type { AdapterRequest, OperationHandler } from '../types.js';
import {
  isAnthropicModel,
  toVertexAnthropicBody,
  vertexAnthropicHeaders,
  vertexAnthropicModelId,
} from './vertex-ai-anthropic.js';
import { vertexBearer } from './vertex-ai-bearer.js';
import {
  dedicatedTrafficStream,
  vertexRequestTypeHeaders,
  withDedicatedTraffic,
} from './vertex-ai-request-type.js';
import {
  fromVertexEmbedContentResponse,
  fromVertexEmbeddingResponse,
  toVertexEmbedContentBody,
  toVertexEmbeddingBody,
  vertexEmbeddingMethod,
  type VertexEmbedContentResponse,
  type VertexPredictEmbeddingResponse,
} from './vertex-ai-embeddings.js';
import { vertexModelIdFor } from './vertex-ai-model-project.js';
import { vertexModelId, vertexModelUrl } from './vertex-ai-urls.js';

export const VERTEX_PROVIDER = 'vertex-ai';

export function vertexModelOf(req: AdapterRequest): string {
  return vertexModelId(String(req.body.model ?? ''));
}

/** The target's request type (cloudb_request_type) comes after the forwarded headers: it wins over a
 * client's X-Vertex-AI-LLM-Request-Type the config forwards. */
function jsonHeaders(req: AdapterRequest): Record<string, string> {
  return {
    'content-type': 'application/json',
    ...req.forwardHeaders,
    ...vertexRequestTypeHeaders(req.target),
    ...vertexBearer(req),
  };
}

export const vertexChatOperation: OperationHandler<'chat'> = {
  buildRequest(req) {
    const model = vertexModelIdFor(req.target, String(req.body.model ?? ''));
    const headers = jsonHeaders(req);
    const anthropicModel = vertexAnthropicModelId(model);
    if (anthropicModel !== undefined) {
      const action = req.stream ? 'streamRawPredict' : 'rawPredict';
      return {
        method: 'POST',
        url: vertexModelUrl(req.target, 'anthropic', anthropicModel, action),
        headers: { ...headers, ...vertexAnthropicHeaders(req) },
        body: JSON.stringify(toVertexAnthropicBody(req)),
      };
    }
    const action = req.stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
    const payload = toGeminiRequestBody(req.body, {
      provider: VERTEX_PROVIDER,
      strictCompat: req.strictCompat,
    });
    return {
      method: 'POST',
      url: vertexModelUrl(req.target, 'google', model, action),
      headers,
      body: JSON.stringify(payload),
    };
  },

  parseResponse(req, res) {
    const model = vertexModelOf(req);
    if (isAnthropicModel(model)) {
      const completion = fromAnthropicResponse(req, res.body, model, VERTEX_PROVIDER);
      const usage = withDedicatedTraffic(req.target, completion.usage);
      return usage ? { ...completion, usage } : completion;
    }
    return fromGeminiResponse(res.body as GeminiGenerateContentResponse, {
      provider: VERTEX_PROVIDER,
      model,
      strictCompat: req.strictCompat,
      legacyFunctions: usesLegacyFunctions(req.body),
    });
  },

  createStreamTranslator(req) {
    if (isAnthropicModel(vertexModelOf(req))) {
      const translator = createAnthropicStreamTranslator(req, VERTEX_PROVIDER);
      return dedicatedTrafficStream(req.target, translator, { chunks: true });
    }
    return createGeminiStreamTranslator(geminiStreamOptions(req, VERTEX_PROVIDER));
  },
};

export const vertexEmbeddingsOperation: OperationHandler<'embeddings'> = {
  buildRequest(req) {
    const headers = jsonHeaders(req);
    const model = vertexModelIdFor(req.target, String(req.body.model ?? ''));
    const method = vertexEmbeddingMethod(model);
    return {
      method: 'POST',
      url: vertexModelUrl(req.target, 'google', model, method),
      headers,
      body: JSON.stringify(
        method === 'embedContent' ? toVertexEmbedContentBody(req.body) : toVertexEmbeddingBody(req.body),
      ),
    };
  },
  parseResponse: (req, res) =>
    vertexEmbeddingMethod(vertexModelOf(req)) === 'embedContent'
      ? fromVertexEmbedContentResponse(res.body as VertexEmbedContentResponse, req.body)
      : fromVertexEmbeddingResponse(res.body as VertexPredictEmbeddingResponse, req.body),
};
