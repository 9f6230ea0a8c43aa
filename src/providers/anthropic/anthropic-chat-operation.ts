import type { OperationHandler } from '../types.js';
import { joinUrl } from '../shared/url.js';
import { ANTHROPIC_BASE_URL, ANTHROPIC_MESSAGES_PATH } from './anthropic-config.js';
import { anthropicHeaders } from './anthropic-headers.js';
import { toAnthropicMessagesBody } from './anthropic-request-body.js';
import { fromAnthropicResponse } from './anthropic-response.js';
import { createAnthropicStreamTranslator } from './anthropic-stream-translator.js';

/** Chat completions as Anthropic Messages (`POST /v1/messages`), streamed or not. */
export const anthropicChatOperation: OperationHandler<'chat'> = {
  buildRequest(req) {
    return {
      method: 'POST',
      url: joinUrl(req.target.custom_host ?? ANTHROPIC_BASE_URL, ANTHROPIC_MESSAGES_PATH),
      headers: { ...req.forwardHeaders, ...anthropicHeaders(req.target, req.clientHeaders) },
      body: JSON.stringify(toAnthropicMessagesBody(req)),
    };
  },

  parseResponse(req, res) {
    return fromAnthropicResponse(req, res.body, String(req.body.model ?? ''));
  },

  createStreamTranslator(req) {
    return createAnthropicStreamTranslator(req);
  },
};
