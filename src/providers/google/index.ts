/**
 * Google Gemini API (`generativelanguage.googleapis.com`). The Gemini translation exported here is pure
 * and shared with the `vertex-ai` adapter, which speaks the same body over a different address and auth.
 */
import { GatewayError } from '../../core/errors.js';
import type { ChatRequest, EmbeddingRequest } from '../../core/openai-types.js';
import { joinUrl } from '../shared/url.js';
import type { AdapterRequest, ProviderAdapter, UpstreamRequest } from '../types.js';
import type { GeminiBatchEmbedResponse, GeminiGenerateContentResponse } from './google-api-types.js';
import { fromGeminiResponse } from './convert-from-google-response.js';
import { toGeminiRequestBody } from './convert-to-google-request.js';
import { googleCapabilities } from './google-capabilities.js';
import { fromGeminiBatchEmbedResponse, toGeminiBatchEmbedBody } from './google-embeddings.js';
import { googleErrorFromResponse } from './google-error.js';
import { createGeminiStreamTranslator } from './google-stream-translator.js';

export { toGeminiRequestBody, type GoogleRequestOptions } from './convert-to-google-request.js';
export { fromGeminiResponse, type GoogleResponseOptions } from './convert-from-google-response.js';
export { createGeminiStreamTranslator, type GoogleStreamOptions } from './google-stream-translator.js';
export { googleErrorFromResponse, googleErrorFromObject, retryDelayMs } from './google-error.js';
export { convertGoogleUsage } from './convert-google-usage.js';
export { convertJsonSchemaToGoogleSchema } from './convert-json-schema-to-google-schema.js';
export { embeddingInputs, toEmbeddingResponse } from './google-embeddings.js';
export { geminiParameters, geminiNotes } from './google-capabilities.js';
export type * from './google-api-types.js';

export const GOOGLE_BASE_URL = 'https://generativelanguage.googleapis.com';
const PROVIDER = 'google';

/** `models/gemini-2.5-flash` and `gemini-2.5-flash` name the same model. */
export function geminiModelId(model: string): string {
  return model.startsWith('models/') ? model.slice('models/'.length) : model;
}

/** The translation options every Gemini-speaking adapter derives from a request. */
export function geminiStreamOptions(req: AdapterRequest, provider: string) {
  const body = req.body as ChatRequest;
  return {
    provider,
    model: body.model,
    strictCompat: req.strictCompat,
    includeUsage: body.stream_options?.include_usage === true,
    choiceCount: typeof body.n === 'number' && body.n > 0 ? body.n : 1,
  };
}

function headersFor(
  req: { target: AdapterRequest['target'] },
  extra: Record<string, string> = {},
): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...extra };
  if (req.target.api_key) headers['x-goog-api-key'] = req.target.api_key;
  return headers;
}

function baseUrl(req: { target: AdapterRequest['target'] }): string {
  return req.target.custom_host || GOOGLE_BASE_URL;
}

export const googleAdapter: ProviderAdapter = {
  id: PROVIDER,
  aliases: ['gemini'],
  displayName: 'Google Gemini API',
  capabilities: googleCapabilities,

  buildRequest(req): UpstreamRequest {
    if (!req.target.api_key && !req.target.custom_host) {
      throw new GatewayError('provider_config_error', 'google needs api_key', { param: 'api_key' });
    }
    const headers = headersFor(req, req.forwardHeaders);
    if (req.endpoint === 'embeddings') {
      const body = req.body as EmbeddingRequest;
      const url = joinUrl(baseUrl(req), `/v1beta/models/${geminiModelId(body.model)}:batchEmbedContents`);
      return { method: 'POST', url, headers, body: JSON.stringify(toGeminiBatchEmbedBody(body, PROVIDER)) };
    }
    if (req.endpoint !== 'chat') {
      throw new GatewayError('unsupported_endpoint', `${req.endpoint} is not supported by google`);
    }
    const body = req.body as ChatRequest;
    const action = req.stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
    const url = joinUrl(baseUrl(req), `/v1beta/models/${geminiModelId(body.model)}:${action}`);
    const payload = toGeminiRequestBody(body, { provider: PROVIDER, strictCompat: req.strictCompat });
    return { method: 'POST', url, headers, body: JSON.stringify(payload) };
  },

  parseResponse(req, res) {
    if (req.endpoint === 'embeddings') {
      return fromGeminiBatchEmbedResponse(res.body as GeminiBatchEmbedResponse, req.body as EmbeddingRequest);
    }
    const body = req.body as ChatRequest;
    return fromGeminiResponse(res.body as GeminiGenerateContentResponse, {
      provider: PROVIDER,
      model: body.model,
      strictCompat: req.strictCompat,
    });
  },

  createStreamTranslator(req) {
    return createGeminiStreamTranslator(geminiStreamOptions(req, PROVIDER));
  },

  parseError(_req, res) {
    return googleErrorFromResponse(PROVIDER, res);
  },

  buildPassthrough(req): UpstreamRequest {
    const request: UpstreamRequest = {
      method: req.method,
      url: joinUrl(joinUrl(baseUrl(req), '/v1beta'), req.path),
      headers: headersFor(req, req.headers),
    };
    if (req.body !== undefined) request.body = req.body;
    return request;
  },
};
