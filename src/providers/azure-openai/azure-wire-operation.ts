import { parseOpenAIResponse } from '../openai/index.js';
import type { EndpointKind, OperationHandler } from '../types.js';
import { createAzureStreamTranslator } from './azure-stream-translator.js';
import { normaliseAzureResponse } from './normalise-azure-response.js';

/**
 * One operation of an Azure host of OpenAI's wire format (Azure OpenAI, Azure AI model inference): the
 * request as the adapter builds it, answers and stream chunks normalised by ./normalise-azure-response.ts.
 * Embeddings never stream, so their handler has no translator.
 */
export function azureWireOperation(
  provider: string,
  endpoint: EndpointKind,
  buildRequest: OperationHandler['buildRequest'],
): OperationHandler {
  const parseResponse: OperationHandler['parseResponse'] = (req, res) =>
    normaliseAzureResponse(parseOpenAIResponse(provider, req, res), req.strictCompat);
  if (endpoint === 'embeddings') return { buildRequest, parseResponse };
  return {
    buildRequest,
    parseResponse,
    createStreamTranslator: (req) => createAzureStreamTranslator(req, provider),
  };
}
