/**
 * The Anthropic Messages API adapter. The translation functions are exported on their own so that other
 * hosts of Anthropic models (Vertex AI) reuse them with their own URL and authentication.
 */
import type { ProviderAdapter } from '../types.js';
import { firstUsage, openAIChatUsage } from '../shared/answer-usage.js';
import { joinUrl } from '../shared/url.js';
import { anthropicCapabilities } from './anthropic-capabilities.js';
import { anthropicChatOperation } from './anthropic-chat-operation.js';
import { anthropicCountTokensOperation, anthropicMessagesOperation } from './anthropic-messages-operation.js';
import { ANTHROPIC_BASE_URL } from './anthropic-config.js';
import { anthropicErrorFromResponse, anthropicEventFailure } from './anthropic-error.js';
import { anthropicHeaders } from './anthropic-headers.js';
import { messagesAnswerUsage } from './anthropic-messages-relay.js';

export { toAnthropicMessagesBody, type AnthropicBodyOptions } from './anthropic-request-body.js';
export { fromAnthropicResponse } from './anthropic-response.js';
export { createAnthropicStreamTranslator } from './anthropic-stream-translator.js';
export {
  anthropicErrorFromResponse,
  anthropicEventFailure,
  anthropicStreamError,
} from './anthropic-error.js';
export { anthropicCapabilities } from './anthropic-capabilities.js';
export { toOpenAIUsage as anthropicUsageToOpenAI } from './anthropic-usage.js';
export { MessagesEventRelay, messagesAnswerUsage } from './anthropic-messages-relay.js';
export { refuseNonBase64Images } from './base64-image-sources.js';
export { withAutomaticCacheBreakpoint } from './automatic-cache-breakpoint.js';

export const anthropicAdapter: ProviderAdapter = {
  id: 'anthropic',
  displayName: 'Anthropic',
  capabilities: anthropicCapabilities,

  operations: {
    chat: anthropicChatOperation,
    messages: anthropicMessagesOperation,
    count_tokens: anthropicCountTokensOperation,
  },

  parseError(_req, res) {
    return anthropicErrorFromResponse('anthropic', res);
  },

  buildPassthrough(req) {
    const headers: Record<string, string> = { ...req.headers };
    delete headers.authorization;
    delete headers.host;
    Object.assign(headers, anthropicHeaders(req.target, req.headers));
    if (req.headers['content-type']) headers['content-type'] = req.headers['content-type'];
    return {
      method: req.method,
      url: joinUrl(req.target.custom_host ?? ANTHROPIC_BASE_URL, `/v1${req.path}`),
      headers,
      ...(req.body ? { body: req.body } : {}),
    };
  },

  // Messages, and the chat completions of Anthropic's OpenAI-compatible endpoint.
  passthroughUsage: firstUsage(messagesAnswerUsage, openAIChatUsage),
  passthroughStreamFailure: anthropicEventFailure('anthropic'),
};
