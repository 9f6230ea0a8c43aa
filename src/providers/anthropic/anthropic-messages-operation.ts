/**
 * Anthropic's own Messages API, natively: the client's body goes upstream as it is (thinking blocks and
 * their signatures, `cache_control`, tool use and fields the gateway does not know included), the JSON
 * answer is relayed byte for byte, and a stream's events are relayed one by one with their own text.
 * `count_tokens` is Anthropic's own count.
 */
import type { Usage } from '../../core/openai-types.js';
import type { OperationHandler } from '../types.js';
import { joinUrl } from '../shared/url.js';
import { ANTHROPIC_BASE_URL, ANTHROPIC_MESSAGES_PATH } from './anthropic-config.js';
import { anthropicHeaders } from './anthropic-headers.js';
import { MessagesEventRelay, messagesAnswerUsage } from './anthropic-messages-relay.js';

export const ANTHROPIC_COUNT_TOKENS_PATH = '/v1/messages/count_tokens';

/** The usage of a call that generates nothing: a token count. */
export const NO_TOKENS_SPENT: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

export const anthropicMessagesOperation: OperationHandler<'messages'> = {
  buildRequest(req) {
    return {
      method: 'POST',
      url: joinUrl(req.target.custom_host ?? ANTHROPIC_BASE_URL, ANTHROPIC_MESSAGES_PATH),
      headers: { ...req.forwardHeaders, ...anthropicHeaders(req.target, req.clientHeaders) },
      body: JSON.stringify(req.body),
    };
  },
  parseResponse: (_req, res) => res.body,
  usageOf: messagesAnswerUsage,
  createStreamTranslator: () => new MessagesEventRelay('anthropic'),
};

export const anthropicCountTokensOperation: OperationHandler<'count_tokens'> = {
  buildRequest(req) {
    return {
      method: 'POST',
      url: joinUrl(req.target.custom_host ?? ANTHROPIC_BASE_URL, ANTHROPIC_COUNT_TOKENS_PATH),
      headers: { ...req.forwardHeaders, ...anthropicHeaders(req.target, req.clientHeaders) },
      body: JSON.stringify(req.body),
    };
  },
  parseResponse: (_req, res) => res.body,
  // A count is not a generation: no tokens are spent (and a rate-limit reservation is settled to none).
  usageOf: () => NO_TOKENS_SPENT,
};
