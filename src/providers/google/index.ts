/**
 * Google Gemini API (`generativelanguage.googleapis.com`). The Gemini translation exported here is pure
 * and shared with the `vertex-ai` adapter, which speaks the same body over a different address and auth.
 */
import { firstUsage, openAIChatUsage } from '../shared/answer-usage.js';
import { joinUrl } from '../shared/url.js';
import { geminiAnswerUsage } from './convert-google-usage.js';
import type { ProviderAdapter, UpstreamRequest } from '../types.js';
import { googleCapabilities } from './google-capabilities.js';
import { geminiEventFailure, googleErrorFromResponse } from './google-error.js';
import {
  GOOGLE_PROVIDER,
  googleBaseUrl,
  googleChatOperation,
  googleEmbeddingsOperation,
  googleHeaders,
} from './google-operations.js';

export { toGeminiRequestBody, type GoogleRequestOptions } from './convert-to-google-request.js';
export { fromGeminiResponse, type GoogleResponseOptions } from './convert-from-google-response.js';
export { createGeminiStreamTranslator, type GoogleStreamOptions } from './google-stream-translator.js';
export {
  geminiEventFailure,
  googleErrorFromResponse,
  googleErrorFromObject,
  retryDelayMs,
} from './google-error.js';
export { convertGoogleUsage, geminiAnswerUsage } from './convert-google-usage.js';
export { convertJsonSchemaToGoogleSchema } from './convert-json-schema-to-google-schema.js';
export { usesLegacyFunctions } from './google-prepare-tools.js';
export { embeddingInputs, toEmbeddingResponse } from './google-embeddings.js';
export { geminiParameters, geminiNotes, GEMINI_STOP_SEQUENCES } from './google-capabilities.js';
export type * from './google-api-types.js';
export { GOOGLE_BASE_URL, geminiModelId, geminiStreamOptions } from './google-operations.js';

export const googleAdapter: ProviderAdapter = {
  id: GOOGLE_PROVIDER,
  aliases: ['gemini'],
  displayName: 'Google Gemini API',
  capabilities: googleCapabilities,

  operations: { chat: googleChatOperation, embeddings: googleEmbeddingsOperation },

  parseError(_req, res) {
    return googleErrorFromResponse(GOOGLE_PROVIDER, res);
  },

  buildPassthrough(req): UpstreamRequest {
    const request: UpstreamRequest = {
      method: req.method,
      url: joinUrl(joinUrl(googleBaseUrl(req.target), '/v1beta'), req.path),
      headers: googleHeaders(req.target, req.headers),
    };
    if (req.body !== undefined) request.body = req.body;
    return request;
  },

  // generateContent and embeddings, and the OpenAI-compatible endpoint's answers.
  passthroughUsage: firstUsage(geminiAnswerUsage, openAIChatUsage),
  // Google's error object written into a stream (streamGenerateContent?alt=sse).
  passthroughStreamFailure: geminiEventFailure(GOOGLE_PROVIDER),
};
