import type { ChatCompletion, ContentBlock, ToolCall } from '../../core/openai-types.js';
import type { GeminiCandidate, GeminiGenerateContentResponse } from './google-api-types.js';
import { convertGoogleUsage } from './convert-google-usage.js';
import { googleErrorFromObject } from './google-error.js';
import { completionId, createdAt, generateToolCallId } from './google-ids.js';
import { invalidOutputError, isInvalidCallFinish } from './google-invalid-output.js';
import { mapGoogleFinishReason } from './map-google-finish-reason.js';

export interface GoogleResponseOptions {
  provider: string;
  /** The model the client asked for; used when Google does not name the version it ran. */
  model: string;
  /** false: thought summaries and signatures come back in `message.content_blocks`. */
  strictCompat: boolean;
  /** The request used the deprecated `functions`: the call comes back as `function_call`. */
  legacyFunctions?: boolean;
}

/**
 * A `generateContent` answer → an OpenAI chat completion, one choice per candidate. A prompt blocked
 * before any candidate (`promptFeedback.blockReason`) becomes one empty choice ending in
 * `content_filter`. Throws ProviderError when the body is an error.
 */
export function fromGeminiResponse(
  body: GeminiGenerateContentResponse,
  options: GoogleResponseOptions,
): ChatCompletion {
  if (body.error) throw googleErrorFromObject(options.provider, body.error);
  const candidates = body.candidates ?? [];
  const choices: ChatCompletion['choices'] = candidates.map((candidate, position) =>
    toChoice(candidate, position, options.strictCompat, options.legacyFunctions === true),
  );
  const failed = candidates.findIndex((candidate) => isInvalidCallFinish(candidate.finishReason));
  if (failed >= 0 && choices.every((choice) => !hasAnswer(choice))) {
    throw invalidOutputError(options.provider, candidates[failed]);
  }
  if (choices.length === 0) {
    choices.push({
      index: 0,
      message: { role: 'assistant', content: null, refusal: null },
      finish_reason: body.promptFeedback?.blockReason ? 'content_filter' : 'stop',
      logprobs: null,
    });
  }
  const completion: ChatCompletion = {
    id: completionId(body),
    object: 'chat.completion',
    created: createdAt(body),
    model: body.modelVersion ?? options.model,
    choices,
  };
  const usage = convertGoogleUsage(body.usageMetadata);
  if (usage) completion.usage = usage;
  return completion;
}

/** Text or a tool call: what a client reads as the answer (thought summaries are not). */
function hasAnswer(choice: ChatCompletion['choices'][number]): boolean {
  return Boolean(choice.message.content) || (choice.message.tool_calls?.length ?? 0) > 0;
}

function toChoice(
  candidate: GeminiCandidate,
  position: number,
  strictCompat: boolean,
  legacyFunctions: boolean,
): ChatCompletion['choices'][number] {
  let text = '';
  const thinking: ContentBlock[] = [];
  const toolCalls: ToolCall[] = [];
  let signature: string | undefined;
  for (const part of candidate.content?.parts ?? []) {
    if (part.thoughtSignature && signature === undefined) signature = part.thoughtSignature;
    if (part.functionCall) {
      toolCalls.push({
        id: part.functionCall.id ?? generateToolCallId(),
        type: 'function',
        function: {
          name: part.functionCall.name ?? '',
          arguments: JSON.stringify(part.functionCall.args ?? {}),
        },
      });
    } else if (typeof part.text === 'string') {
      if (part.thought) thinking.push({ type: 'thinking', thinking: part.text });
      else text += part.text;
    }
  }
  const message: ChatCompletion['choices'][number]['message'] = {
    role: 'assistant',
    content: text.length > 0 || toolCalls.length === 0 ? text : null,
    refusal: null,
  };
  // The deprecated form carries one call.
  if (toolCalls.length > 0 && legacyFunctions) message.function_call = toolCalls[0].function;
  else if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (!strictCompat) {
    const blocks = contentBlocks(thinking, signature, toolCalls.length > 0, text);
    if (blocks) message.content_blocks = blocks;
  }
  const finish = mapGoogleFinishReason(candidate.finishReason, toolCalls.length > 0) ?? 'stop';
  return {
    index: candidate.index ?? position,
    message,
    finish_reason: legacyFunctions && finish === 'tool_calls' ? 'function_call' : finish,
    logprobs: null,
  };
}

/**
 * Thought summaries, then the answer text. A thought signature rides on the last thinking block so a
 * client that sends `content_blocks` back keeps Gemini's reasoning state across tool-calling turns; it is
 * only surfaced when there were thoughts or function calls, where Gemini needs it back.
 */
function contentBlocks(
  thinking: ContentBlock[],
  signature: string | undefined,
  hasToolCalls: boolean,
  text: string,
): ContentBlock[] | undefined {
  const wantsSignature = signature !== undefined && (hasToolCalls || thinking.length > 0);
  if (thinking.length === 0 && !wantsSignature) return undefined;
  const blocks = thinking.length > 0 ? [...thinking] : [{ type: 'thinking' as const, thinking: '' }];
  if (wantsSignature) blocks[blocks.length - 1] = { ...blocks[blocks.length - 1], signature };
  if (text.length > 0) blocks.push({ type: 'text', text });
  return blocks;
}
