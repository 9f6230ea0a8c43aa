/** The Cohere adapter: Chat v2 and Embed v2, translated to and from the OpenAI shapes. */
import type { PassthroughRequest, ProviderAdapter, UpstreamRequest } from '../types.js';
import { openAIEventFailure } from '../openai/index.js';
import { firstUsage, openAIChatUsage } from '../shared/answer-usage.js';
import { firstFailure } from '../shared/stream-failure.js';
import { cohereHeaders, cohereUrl } from './api.js';
import { cohereAnswerUsage, cohereStreamEndUsage } from './convert-cohere-usage.js';
import { COHERE_CHAT_PARAMETERS, parameterDocs } from './cohere-chat-parameters.js';
import { COHERE_TEXTS_PER_CALL, DEFAULT_INPUT_TYPE } from './cohere-embeddings.js';
import { COHERE_PROVIDER_ID, cohereErrorFromResponse, cohereEventFailure } from './cohere-error.js';
import { cohereChatOperation, cohereEmbeddingsOperation } from './cohere-operations.js';

export const cohereAdapter: ProviderAdapter = {
  id: COHERE_PROVIDER_ID,
  displayName: 'Cohere',
  capabilities: {
    endpoints: ['chat', 'embeddings'],
    streaming: true,
    tools: true,
    parallelToolCalls: true,
    images: true,
    jsonSchema: true,
    thinking: true,
    n: 'fanout',
    // Embed v2 refuses more than 96 texts in one call.
    embeddingInputsPerCall: () => COHERE_TEXTS_PER_CALL,
    parameters: {
      ...parameterDocs(COHERE_CHAT_PARAMETERS),
      'embeddings: input': `→ texts (strings only; token arrays refused with 400); more than ${COHERE_TEXTS_PER_CALL} go as calls of ${COHERE_TEXTS_PER_CALL}, merged in input order`,
      'embeddings: dimensions': '→ output_dimension',
      'embeddings: encoding_format': 'float from Cohere; base64 produced by the gateway from the floats',
      'embeddings: input_type': `Cohere's own field, passed on; default ${DEFAULT_INPUT_TYPE}`,
    },
    credentials: ['api_key', 'custom_host'],
    notes: [
      'Auth: `Authorization: Bearer <api_key>`; base URL https://api.cohere.com (custom_host replaces it).',
      "Cohere's tool plan comes back as a thinking content block (non-strict mode) and goes back as tool_plan.",
      'Text completions (/v1/completions) are not offered by Cohere v2.',
    ],
  },

  operations: { chat: cohereChatOperation, embeddings: cohereEmbeddingsOperation },

  parseError: (_req, res) => cohereErrorFromResponse(res),

  buildPassthrough(req: PassthroughRequest): UpstreamRequest {
    // Cohere versions its paths itself (/v1/rerank, /v2/rerank): a path that names its version is kept,
    // any other is sent to v1, so `/v1/rerank` and `/v1/v2/rerank` at the gateway both reach Cohere.
    const path = /^\/v\d+\//.test(req.path) ? req.path : `/v1${req.path}`;
    const headers: Record<string, string> = { ...req.headers };
    delete headers.authorization;
    delete headers.host;
    const auth = cohereHeaders(req.target).authorization;
    if (auth) headers.authorization = auth;
    const out: UpstreamRequest = { method: req.method, url: cohereUrl(req.target, path), headers };
    if (req.body !== undefined) out.body = req.body;
    return out;
  },

  // Cohere's own answers and v2 chat streams, and its OpenAI-compatible endpoint's.
  passthroughUsage: firstUsage(openAIChatUsage, cohereAnswerUsage, cohereStreamEndUsage),
  // A v2 chat stream's failures, and those of its OpenAI-compatible endpoint's streams.
  passthroughStreamFailure: firstFailure(cohereEventFailure, openAIEventFailure(COHERE_PROVIDER_ID)),
};
