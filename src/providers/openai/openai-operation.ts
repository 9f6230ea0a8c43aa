import type { EndpointKind, OperationHandler } from '../types.js';
import { parseOpenAIResponse } from './openai-response.js';
import { createOpenAIStreamTranslator } from './openai-stream-translator.js';

/**
 * One operation of an OpenAI-wire provider: the request as the provider's adapter builds it, the answer
 * and the stream relayed as they came. Embeddings never stream, so their handler has no translator.
 */
export function openAIWireOperation(
  provider: string,
  endpoint: EndpointKind,
  buildRequest: OperationHandler['buildRequest'],
): OperationHandler {
  const parseResponse: OperationHandler['parseResponse'] = (req, res) =>
    parseOpenAIResponse(provider, req, res);
  if (endpoint === 'embeddings') return { buildRequest, parseResponse };
  return {
    buildRequest,
    parseResponse,
    createStreamTranslator: (req) => createOpenAIStreamTranslator(req, provider),
  };
}
