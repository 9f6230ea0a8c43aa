/** Bedrock's operations: chat through Converse / ConverseStream, embeddings through InvokeModel. */
import { GatewayError } from '../../core/errors.js';
import type { AdapterRequest, OperationHandler, UpstreamRequest } from '../types.js';
import { joinUrl } from '../shared/url.js';
import { toBedrockConverseBody } from './bedrock-converse-body.js';
import { fromBedrockEmbeddingResponse, toBedrockEmbeddingBody } from './bedrock-embeddings.js';
import { fromBedrockConverseResponse } from './bedrock-response.js';
import { signBedrockRequest } from './bedrock-sign.js';
import { createBedrockStreamTranslator } from './bedrock-stream-translator.js';
import { bedrockBaseUrl, bedrockCredentials, type BedrockCredentials } from './bedrock-target.js';

/** A signed `POST /model/{model}/{action}` with a JSON body. */
function modelCall(
  req: AdapterRequest,
  credentials: BedrockCredentials,
  action: string,
  body: Record<string, unknown>,
  accept: string,
): Promise<UpstreamRequest> {
  const model = req.body.model;
  if (typeof model !== 'string' || model === '') {
    throw new GatewayError('invalid_body', 'model is required', { param: 'model' });
  }
  const request: UpstreamRequest = {
    method: 'POST',
    url: joinUrl(
      bedrockBaseUrl(req.target, credentials.region),
      `/model/${encodeURIComponent(model)}/${action}`,
    ),
    headers: { ...req.forwardHeaders, 'content-type': 'application/json', accept },
    body: JSON.stringify(body),
  };
  return signBedrockRequest(request, credentials);
}

export const bedrockChatOperation: OperationHandler<'chat'> = {
  async buildRequest(req) {
    const credentials = bedrockCredentials(req.target);
    const body = toBedrockConverseBody(req.body, req.target.cloudc_base_model);
    return req.stream
      ? modelCall(req, credentials, 'converse-stream', body, 'application/vnd.amazon.eventstream')
      : modelCall(req, credentials, 'converse', body, 'application/json');
  },
  parseResponse: (req, res) => fromBedrockConverseResponse(req, res.body),
  createStreamTranslator: (req) => createBedrockStreamTranslator(req),
};

export const bedrockEmbeddingsOperation: OperationHandler<'embeddings'> = {
  async buildRequest(req) {
    const credentials = bedrockCredentials(req.target);
    const body = toBedrockEmbeddingBody(req.body, req.target.cloudc_base_model);
    return modelCall(req, credentials, 'invoke', body, 'application/json');
  },
  parseResponse: (req, res) =>
    fromBedrockEmbeddingResponse(req.body, res.body, res.headers, req.target.cloudc_base_model),
};
