/** Cohere's operations: chat through Chat v2, embeddings through Embed v2. */
import type { OperationHandler } from '../types.js';
import { COHERE_PATHS, cohereHeaders, cohereUrl } from './api.js';
import { buildCohereChatBody } from './build-cohere-chat-body.js';
import { buildCohereEmbedBody, parseCohereEmbedResponse } from './cohere-embeddings.js';
import { createCohereStreamTranslator } from './cohere-stream-translator.js';
import { parseCohereChatResponse } from './parse-cohere-chat-response.js';

export const cohereChatOperation: OperationHandler<'chat'> = {
  buildRequest(req) {
    const headers = { ...req.forwardHeaders, ...cohereHeaders(req.target) };
    if (req.stream) headers.accept = 'text/event-stream';
    return {
      method: 'POST',
      url: cohereUrl(req.target, COHERE_PATHS.chat),
      headers,
      body: JSON.stringify(buildCohereChatBody(req.body, req.stream)),
    };
  },
  parseResponse: parseCohereChatResponse,
  createStreamTranslator: createCohereStreamTranslator,
};

export const cohereEmbeddingsOperation: OperationHandler<'embeddings'> = {
  buildRequest(req) {
    return {
      method: 'POST',
      url: cohereUrl(req.target, COHERE_PATHS.embeddings),
      headers: { ...req.forwardHeaders, ...cohereHeaders(req.target) },
      body: JSON.stringify(buildCohereEmbedBody(req.body)),
    };
  },
  parseResponse: (req, res) => parseCohereEmbedResponse(req.body, res.body),
};
