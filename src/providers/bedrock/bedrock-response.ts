import { randomUUID } from 'node:crypto';
import { ProviderError } from '../../core/errors.js';
import type { ChatCompletion, ContentBlock, ToolCall } from '../../core/openai-types.js';
import type { AdapterRequest } from '../types.js';
import { unixSeconds } from '../shared/chat-chunks.js';
import type { BedrockConverseResponse } from './bedrock-api-types.js';
import { JSON_RESPONSE_TOOL_NAME } from './bedrock-config.js';
import { usesJsonResponseTool } from '../shared/chat-request-fields.js';
import { toOpenAIUsage } from './bedrock-usage.js';
import { bedrockInvalidOutput, mapBedrockFinishReason } from './map-bedrock-finish-reason.js';

/** Converse answers carry no id; the gateway makes one in OpenAI's style. */
export function newChatCompletionId(): string {
  return `chatcmpl-${randomUUID().replace(/-/g, '')}`;
}

/** A Converse answer → an OpenAI chat completion (reasoning in content_blocks unless strict). */
export function fromBedrockConverseResponse(req: AdapterRequest<'chat'>, body: unknown): ChatCompletion {
  const answer = body as BedrockConverseResponse;
  const content = answer?.output?.message?.content;
  if (!Array.isArray(content)) {
    throw new ProviderError({
      status: 502,
      provider: 'bedrock',
      message: 'bedrock returned a response without output.message.content',
      code: 'upstream_invalid_response',
    });
  }
  const jsonMode = usesJsonResponseTool(req.body);
  // The forced `json` tool's input is the whole answer: text the model wrote beside it would make it invalid JSON.
  const jsonAnswer = jsonMode
    ? content.find((block) => block.toolUse?.name === JSON_RESPONSE_TOOL_NAME)
    : undefined;
  let text = '';
  let hasText = false;
  let hasReasoning = false;
  const toolCalls: ToolCall[] = [];
  const blocks: ContentBlock[] = [];
  for (const block of content) {
    if (typeof block.text === 'string') {
      if (jsonAnswer) continue;
      text += block.text;
      hasText = true;
      blocks.push({ type: 'text', text: block.text });
    } else if (block.toolUse) {
      const args = JSON.stringify(block.toolUse.input ?? {});
      if (jsonMode && block.toolUse.name === JSON_RESPONSE_TOOL_NAME) {
        text += args;
        hasText = true;
        blocks.push({ type: 'text', text: args });
      } else {
        toolCalls.push({
          id: block.toolUse.toolUseId,
          type: 'function',
          function: { name: block.toolUse.name, arguments: args },
        });
      }
    } else if (block.reasoningContent?.reasoningText) {
      hasReasoning = true;
      const reasoning = block.reasoningContent.reasoningText;
      blocks.push({ type: 'thinking', thinking: reasoning.text, signature: reasoning.signature ?? '' });
    } else if (typeof block.reasoningContent?.redactedContent === 'string') {
      hasReasoning = true;
      blocks.push({ type: 'redacted_thinking', data: block.reasoningContent.redactedContent });
    }
  }
  const invalid = bedrockInvalidOutput('bedrock', answer.stopReason, hasText || toolCalls.length > 0);
  if (invalid) throw invalid;
  let finishReason = mapBedrockFinishReason(answer.stopReason);
  if (jsonMode && finishReason === 'tool_calls' && toolCalls.length === 0) finishReason = 'stop';
  return {
    id: newChatCompletionId(),
    object: 'chat.completion',
    created: unixSeconds(),
    model: String(req.body.model ?? ''),
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: hasText ? text : null,
          refusal: null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          ...(!req.strictCompat && hasReasoning ? { content_blocks: blocks } : {}),
        },
        finish_reason: finishReason,
        logprobs: null,
      },
    ],
    usage: toOpenAIUsage(answer.usage),
  };
}
