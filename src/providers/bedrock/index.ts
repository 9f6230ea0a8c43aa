/** The Amazon Bedrock adapter: Converse / ConverseStream for chat, InvokeModel for embeddings and for
 * Anthropic Messages on Claude models. */
import type { ProviderAdapter } from '../types.js';
import { firstUsage, openAIChatUsage } from '../shared/answer-usage.js';
import { joinUrl } from '../shared/url.js';
import { anthropicEventFailure, messagesAnswerUsage } from '../anthropic/index.js';
import { converseAnswerUsage, invocationMetricsUsage, invokeHeadersUsage } from './bedrock-usage.js';
import { bedrockCapabilities } from './bedrock-capabilities.js';
import { bedrockErrorFromResponse, bedrockEventFailure } from './bedrock-error.js';
import { firstFailure } from '../shared/stream-failure.js';
import { createBedrockEventStreamDecoder } from './bedrock-event-stream-decoder.js';
import { bedrockMessagesOperation } from './bedrock-messages-operation.js';
import { bedrockChatOperation, bedrockEmbeddingsOperation } from './bedrock-operations.js';
import { signBedrockRequest } from './bedrock-sign.js';
import { bedrockBaseUrl, bedrockCredentials } from './bedrock-target.js';

export { toBedrockConverseBody } from './bedrock-converse-body.js';
export { fromBedrockConverseResponse } from './bedrock-response.js';
export { createBedrockStreamTranslator } from './bedrock-stream-translator.js';
export { createBedrockEventStreamDecoder } from './bedrock-event-stream-decoder.js';
export { bedrockErrorFromResponse } from './bedrock-error.js';
export { signBedrockRequest } from './bedrock-sign.js';
export { bedrockCapabilities } from './bedrock-capabilities.js';

export const bedrockAdapter: ProviderAdapter = {
  id: 'bedrock',
  aliases: ['cloudc'],
  displayName: 'Amazon Bedrock',
  capabilities: bedrockCapabilities,

  operations: {
    chat: bedrockChatOperation,
    embeddings: bedrockEmbeddingsOperation,
    messages: bedrockMessagesOperation,
  },

  createFrameDecoder: createBedrockEventStreamDecoder,

  parseError(_req, res) {
    return bedrockErrorFromResponse('bedrock', res);
  },

  // SigV4 signs the body's bytes: the gateway reads a pass-through body whole before this is called.
  passthroughSignsBody: true,

  async buildPassthrough(req) {
    const credentials = bedrockCredentials(req.target);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (!['authorization', 'host', 'content-length', 'x-amz-date', 'x-amz-security-token'].includes(name)) {
        headers[name] = value;
      }
    }
    return signBedrockRequest(
      {
        method: req.method,
        url: joinUrl(bedrockBaseUrl(req.target, credentials.region), req.path),
        headers,
        ...(req.body ? { body: req.body } : {}),
      },
      credentials,
    );
  },

  // Converse (and ConverseStream's `metadata` event), InvokeModel of an Anthropic model (a Message, and its
  // stream's events), the OpenAI-compatible chat completions, and the invocation metrics that end an
  // InvokeModelWithResponseStream of any model.
  passthroughUsage: firstUsage(
    converseAnswerUsage,
    messagesAnswerUsage,
    openAIChatUsage,
    invocationMetricsUsage,
  ),
  // InvokeModel of the models whose answers carry no usage (Llama, Mistral, Titan, Cohere…).
  passthroughHeaderUsage: invokeHeadersUsage,
  // An exception or error message of the event-stream (ConverseStream's and InvokeModelWithResponseStream's),
  // and Anthropic's error event in a Claude model's chunk, as the translated calls' streams read them.
  passthroughStreamFailure: firstFailure(
    (event) => (event.kind === 'message' ? bedrockEventFailure('bedrock', event) : undefined),
    anthropicEventFailure('bedrock'),
  ),
};
