/** Cohere v2 chat response → OpenAI chat completion. */
import { ProviderError } from '../../core/errors.js';
import type { ChatCompletion, ContentBlock, ToolCall } from '../../core/openai-types.js';
import type { AdapterRequest, UpstreamResponse } from '../types.js';
import type { CohereChatResponse, CohereToolCall } from './cohere-api-types.js';
import { COHERE_PROVIDER_ID, cohereGenerationError } from './cohere-error.js';
import { convertCohereUsage } from './convert-cohere-usage.js';
import { isCohereErrorFinish, mapCohereFinishReason } from './map-cohere-finish-reason.js';

export function parseCohereChatResponse(req: AdapterRequest<'chat'>, res: UpstreamResponse): ChatCompletion {
  const body = res.body as CohereChatResponse | null;
  if (!body || typeof body !== 'object' || !body.message) {
    throw new ProviderError({
      status: 502,
      message: 'Cohere returned a chat response without a message.',
      provider: COHERE_PROVIDER_ID,
      code: 'upstream_invalid_response',
    });
  }
  if (isCohereErrorFinish(body.finish_reason)) throw cohereGenerationError(body.finish_reason, undefined);

  const blocks: ContentBlock[] = [];
  if (body.message.tool_plan) blocks.push({ type: 'thinking', thinking: body.message.tool_plan });
  let text = '';
  for (const part of body.message.content ?? []) {
    if (part.type === 'text' && 'text' in part) {
      text += part.text;
      blocks.push({ type: 'text', text: part.text });
    } else if (part.type === 'thinking' && 'thinking' in part) {
      blocks.push({ type: 'thinking', thinking: part.thinking });
    }
  }
  const toolCalls = (body.message.tool_calls ?? []).map(toOpenAIToolCall);

  const message: ChatCompletion['choices'][number]['message'] = {
    role: 'assistant',
    content: text === '' && toolCalls.length > 0 ? null : text,
    refusal: null,
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (!req.strictCompat && blocks.some((block) => block.type === 'thinking')) message.content_blocks = blocks;

  const completion: ChatCompletion = {
    id: body.id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: String(req.body.model ?? ''),
    choices: [
      {
        index: 0,
        message,
        finish_reason: mapCohereFinishReason(body.finish_reason) ?? 'stop',
        logprobs: null,
      },
    ],
  };
  const usage = convertCohereUsage(body.usage);
  if (usage) completion.usage = usage;
  return completion;
}

function toOpenAIToolCall(call: CohereToolCall): ToolCall {
  return {
    id: call.id,
    type: 'function',
    function: { name: call.function.name, arguments: normaliseArguments(call.function.arguments) },
  };
}

/** Cohere sends `null` (or nothing) as the arguments of a call to a function without parameters. */
export function normaliseArguments(args: string | null | undefined): string {
  return !args || args.trim() === 'null' ? '{}' : args;
}
