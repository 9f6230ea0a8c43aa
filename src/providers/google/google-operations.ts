/** The Gemini API's operations: chat through generateContent / streamGenerateContent, embeddings through
 * batchEmbedContents. */
import { GatewayError } from '../../core/errors.js';
import { joinUrl } from '../shared/url.js';
import type { AdapterRequest, OperationHandler, ProviderTarget } from '../types.js';
import type { GeminiBatchEmbedResponse, GeminiGenerateContentResponse } from './google-api-types.js';
import { fromGeminiResponse } from './convert-from-google-response.js';
import { toGeminiRequestBody } from './convert-to-google-request.js';
import { fromGeminiBatchEmbedResponse, toGeminiBatchEmbedBody } from './google-embeddings.js';
import { usesLegacyFunctions } from './google-prepare-tools.js';
import { createGeminiStreamTranslator } from './google-stream-translator.js';

export const GOOGLE_BASE_URL = 'https://generativelanguage.googleapis.com';
export const GOOGLE_PROVIDER = 'google';

/** `models/gemini-2.5-flash` and `gemini-2.5-flash` name the same model. */
export function geminiModelId(model: string): string {
  return model.startsWith('models/') ? model.slice('models/'.length) : model;
}

/** The translation options every Gemini-speaking adapter derives from a request. */
export function geminiStreamOptions(req: AdapterRequest<'chat'>, provider: string) {
  const body = req.body;
  return {
    provider,
    model: body.model,
    strictCompat: req.strictCompat,
    includeUsage: body.stream_options?.include_usage === true,
    choiceCount: typeof body.n === 'number' && body.n > 0 ? body.n : 1,
    legacyFunctions: usesLegacyFunctions(body),
  };
}

export function googleHeaders(
  target: ProviderTarget,
  extra: Record<string, string> = {},
): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...extra };
  if (target.api_key) headers['x-goog-api-key'] = target.api_key;
  return headers;
}

export function googleBaseUrl(target: ProviderTarget): string {
  return target.custom_host || GOOGLE_BASE_URL;
}

/** `{base}/v1beta/models/{model}:{action}`, refused before any call when the target has no key. */
function modelUrl(target: ProviderTarget, model: string, action: string): string {
  if (!target.api_key && !target.custom_host) {
    throw new GatewayError('provider_config_error', 'google needs api_key', { param: 'api_key' });
  }
  return joinUrl(googleBaseUrl(target), `/v1beta/models/${geminiModelId(model)}:${action}`);
}

export const googleChatOperation: OperationHandler<'chat'> = {
  buildRequest(req) {
    const body = req.body;
    const url = modelUrl(
      req.target,
      body.model,
      req.stream ? 'streamGenerateContent?alt=sse' : 'generateContent',
    );
    const payload = toGeminiRequestBody(body, { provider: GOOGLE_PROVIDER, strictCompat: req.strictCompat });
    return {
      method: 'POST',
      url,
      headers: googleHeaders(req.target, req.forwardHeaders),
      body: JSON.stringify(payload),
    };
  },
  parseResponse(req, res) {
    return fromGeminiResponse(res.body as GeminiGenerateContentResponse, {
      provider: GOOGLE_PROVIDER,
      model: req.body.model,
      strictCompat: req.strictCompat,
      legacyFunctions: usesLegacyFunctions(req.body),
    });
  },
  createStreamTranslator: (req) => createGeminiStreamTranslator(geminiStreamOptions(req, GOOGLE_PROVIDER)),
};

export const googleEmbeddingsOperation: OperationHandler<'embeddings'> = {
  buildRequest(req) {
    const body = req.body;
    const url = modelUrl(req.target, body.model, 'batchEmbedContents');
    const payload = toGeminiBatchEmbedBody(body, GOOGLE_PROVIDER);
    return {
      method: 'POST',
      url,
      headers: googleHeaders(req.target, req.forwardHeaders),
      body: JSON.stringify(payload),
    };
  },
  parseResponse: (req, res) => fromGeminiBatchEmbedResponse(res.body as GeminiBatchEmbedResponse, req.body),
};
