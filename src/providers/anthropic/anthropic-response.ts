import { ProviderError } from '../../core/errors.js';
import type { ChatCompletion, ContentBlock, ToolCall } from '../../core/openai-types.js';
import type { AdapterRequest } from '../types.js';
import { unixSeconds } from '../shared/chat-chunks.js';
import type { AnthropicMessageResponse } from './anthropic-api-types.js';
import { JSON_RESPONSE_TOOL_NAME } from './anthropic-config.js';
import { toOpenAIUsage } from './anthropic-usage.js';
import { usesJsonResponseTool } from '../shared/chat-request-fields.js';
import { mapAnthropicFinishReason } from './map-anthropic-finish-reason.js';
import { mapAnthropicServiceTier } from './map-anthropic-service-tier.js';

/**
 * An Anthropic message → an OpenAI chat completion. Text blocks are joined into `content`; `tool_use`
 * blocks become `tool_calls`; thinking and redacted thinking go to `content_blocks` (with the text blocks,
 * in order) unless the request is strict. Server-tool blocks are not translated. The tier that served the
 * message (`usage.service_tier`) is the answer's `service_tier`, in OpenAI's words.
 */
export function fromAnthropicResponse(
  req: AdapterRequest<'chat'>,
  body: unknown,
  model: string,
  provider = 'anthropic',
): ChatCompletion {
  const message = body as AnthropicMessageResponse;
  if (!message || typeof message !== 'object' || !Array.isArray(message.content)) {
    throw new ProviderError({
      status: 502,
      provider,
      message: `${provider} returned a response without content`,
      code: 'upstream_invalid_response',
    });
  }
  const jsonMode = usesJsonResponseTool(req.body);
  // The forced `json` tool's input is the whole answer: text Claude wrote beside it would make it invalid JSON.
  const jsonAnswer =
    jsonMode &&
    message.content.some(
      (block) => block.type === 'tool_use' && (block as { name?: string }).name === JSON_RESPONSE_TOOL_NAME,
    );
  let text = '';
  let hasText = false;
  const toolCalls: ToolCall[] = [];
  const blocks: ContentBlock[] = [];
  let hasThinking = false;

  for (const block of message.content) {
    if (block.type === 'text') {
      if (jsonAnswer) continue;
      const value = (block as { text: string }).text;
      text += value;
      hasText = true;
      blocks.push({ type: 'text', text: value });
    } else if (block.type === 'tool_use') {
      const call = block as { id: string; name: string; input: unknown };
      const args = JSON.stringify(call.input ?? {});
      if (jsonMode && call.name === JSON_RESPONSE_TOOL_NAME) {
        text += args;
        hasText = true;
        blocks.push({ type: 'text', text: args });
      } else {
        toolCalls.push({ id: call.id, type: 'function', function: { name: call.name, arguments: args } });
      }
    } else if (block.type === 'thinking') {
      const thinking = block as { thinking: string; signature?: string };
      hasThinking = true;
      blocks.push({ type: 'thinking', thinking: thinking.thinking, signature: thinking.signature ?? '' });
    } else if (block.type === 'redacted_thinking') {
      hasThinking = true;
      blocks.push({ type: 'redacted_thinking', data: (block as { data: string }).data });
    }
  }

  let finishReason = mapAnthropicFinishReason(message.stop_reason);
  if (jsonMode && finishReason === 'tool_calls' && toolCalls.length === 0) finishReason = 'stop';

  // The tier that served the call is the one it is billed on (a stream's message_start names it too).
  const serviceTier = mapAnthropicServiceTier(message.usage?.service_tier);
  const completion: ChatCompletion = {
    id: message.id,
    object: 'chat.completion',
    created: unixSeconds(),
    model: message.model || model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: hasText ? text : null,
          refusal: refusalOf(message),
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          ...(!req.strictCompat && hasThinking ? { content_blocks: blocks } : {}),
        },
        finish_reason: finishReason,
        logprobs: null,
      },
    ],
    usage: toOpenAIUsage(message.usage),
    ...(serviceTier && { service_tier: serviceTier }),
  };
  return completion;
}

/** A refused answer says why in `stop_details`; OpenAI clients read that from `message.refusal`. */
function refusalOf(message: AnthropicMessageResponse): string | null {
  if (message.stop_reason !== 'refusal') return null;
  const details = (message as { stop_details?: { explanation?: unknown } }).stop_details;
  return typeof details?.explanation === 'string' ? details.explanation : null;
}
