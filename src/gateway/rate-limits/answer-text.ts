/**
 * How much text a model call's answer carries, for a tokens policy to settle an answer that gave no usage
 * to (token-estimate.ts, tokensWithoutUsage): its choices' content and the arguments of its tool calls,
 * in each operation's shape. A whole answer is read by the output checks' reader of every answer text
 * (hooks/text.ts); a stream is counted chunk by chunk as it goes by (AnswerTextCount), nothing of it kept.
 */
import type { HookRequestType } from '../../hooks/check-types.js';
import { allAnswerTexts } from '../../hooks/text.js';
import type { ChatCompletionChunk } from '../../core/openai-types.js';
import { eventText } from '../delivered-stream.js';
import type { RoutedKind } from '../pipeline-types.js';
import { ForwardingSink, type AnswerChunk } from '../sink.js';

/** Each operation's answer as the reader of answer texts reads it; a Message or a Response is told by its
 * shape, a Messages token count has no text. */
const ANSWER_KINDS: Record<Exclude<RoutedKind, 'passthrough'>, HookRequestType> = {
  chat: 'chatComplete',
  completions: 'complete',
  embeddings: 'embed',
  messages: 'chatComplete',
  count_tokens: 'embed',
  responses: 'chatComplete',
};

/** The characters of text a whole answer carries. */
export function answerTextLength(endpoint: Exclude<RoutedKind, 'passthrough'>, body: unknown): number {
  if (typeof body !== 'object' || body === null) return 0;
  let length = 0;
  for (const text of allAnswerTexts(ANSWER_KINDS[endpoint], body as Record<string, unknown>)) {
    length += text.length;
  }
  return length;
}

/** Counts the text of the stream's chunks that go through it (`length`), and passes them on. */
export class AnswerTextCount extends ForwardingSink {
  length = 0;

  override chunk(chunk: AnswerChunk, raw: string | undefined): Promise<void> | undefined {
    this.length += chunkTextLength(chunk);
    return super.chunk(chunk, raw);
  }
}

/** The text one chunk adds: an OpenAI chunk's content, completion text and tool-call arguments; a Messages
 * or Responses event's text and tool-input deltas. */
function chunkTextLength(chunk: AnswerChunk): number {
  if (!('choices' in chunk)) {
    const text = eventText(chunk);
    if (text !== undefined) return text.length;
    if (chunk.type === 'content_block_delta' && chunk.delta.type === 'input_json_delta') {
      return chunk.delta.partial_json.length;
    }
    const delta = (chunk as { delta?: unknown }).delta;
    return chunk.type === 'response.function_call_arguments.delta' && typeof delta === 'string'
      ? delta.length
      : 0;
  }
  let length = 0;
  for (const choice of chunk.choices as Array<ChatCompletionChunk['choices'][number] & { text?: unknown }>) {
    if (typeof choice.text === 'string') length += choice.text.length;
    const delta = choice.delta as { content?: unknown; tool_calls?: unknown } | undefined;
    if (!delta) continue;
    if (typeof delta.content === 'string') length += delta.content.length;
    if (!Array.isArray(delta.tool_calls)) continue;
    for (const call of delta.tool_calls as Array<{ function?: { arguments?: unknown } }>) {
      const args = call.function?.arguments;
      if (typeof args === 'string') length += args.length;
    }
  }
  return length;
}
