/**
 * The Anthropic Messages API adapter. The translation functions are exported on their own so that other
 * hosts of Anthropic models (Vertex AI) reuse them with their own URL and authentication.
 */
import { GatewayError } from '../../core/errors.js';
import type { ProviderAdapter } from '../types.js';
import { joinUrl } from '../shared/url.js';
import { anthropicCapabilities } from './anthropic-capabilities.js';
import { ANTHROPIC_BASE_URL, ANTHROPIC_MESSAGES_PATH } from './anthropic-config.js';
import { anthropicErrorFromResponse } from './anthropic-error.js';
import { anthropicHeaders } from './anthropic-headers.js';
import { toAnthropicMessagesBody } from './anthropic-request-body.js';
import { fromAnthropicResponse } from './anthropic-response.js';
import { createAnthropicStreamTranslator } from './anthropic-stream-translator.js';

export { toAnthropicMessagesBody, type AnthropicBodyOptions } from './anthropic-request-body.js';
export { fromAnthropicResponse } from './anthropic-response.js';
export { createAnthropicStreamTranslator } from './anthropic-stream-translator.js';
export { anthropicErrorFromResponse, anthropicStreamError } from './anthropic-error.js';
export { anthropicCapabilities } from './anthropic-capabilities.js';
export { toOpenAIUsage as anthropicUsageToOpenAI } from './anthropic-usage.js';

export const anthropicAdapter: ProviderAdapter = {
  id: 'anthropic',
  displayName: 'Anthropic',
  capabilities: anthropicCapabilities,

  buildRequest(req) {
    if (req.endpoint !== 'chat') {
      throw new GatewayError(
        'unsupported_endpoint',
        `anthropic has no ${req.endpoint} endpoint; only chat completions are supported`,
      );
    }
    const body = toAnthropicMessagesBody(req);
    return {
      method: 'POST',
      url: joinUrl(req.target.custom_host ?? ANTHROPIC_BASE_URL, ANTHROPIC_MESSAGES_PATH),
      headers: { ...req.forwardHeaders, ...anthropicHeaders(req.target, req.clientHeaders) },
      body: JSON.stringify(body),
    };
  },

  parseResponse(req, res) {
    return fromAnthropicResponse(req, res.body, String(req.body.model ?? ''));
  },

  createStreamTranslator(req) {
    return createAnthropicStreamTranslator(req);
  },

  parseError(_req, res) {
    return anthropicErrorFromResponse('anthropic', res);
  },

  buildPassthrough(req) {
    const headers: Record<string, string> = { ...req.headers };
    delete headers.authorization;
    delete headers.host;
    delete headers['content-length'];
    Object.assign(headers, anthropicHeaders(req.target, req.headers));
    if (req.headers['content-type']) headers['content-type'] = req.headers['content-type'];
    return {
      method: req.method,
      url: joinUrl(req.target.custom_host ?? ANTHROPIC_BASE_URL, `/v1${req.path}`),
      headers,
      ...(req.body ? { body: req.body } : {}),
    };
  },
};
