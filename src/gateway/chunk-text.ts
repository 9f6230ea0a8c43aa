/**
 * The text one stream chunk carries, read alike by whatever counts or keeps it: the stream the client has
 * so far (delivered-stream.ts keeps each choice's content), a tokens policy's estimate of an answer
 * without usage (rate-limits/answer-text.ts counts every piece) and the answer output checks judge of a
 * stream (hooks/stream-answer.ts assembles and rewrites each choice's content). An OpenAI chunk's content is its chat
 * delta's `content`, or a completion choice's `text` when it has no delta; its tool calls' arguments are
 * tool text. A Messages or Responses event is one answer (index 0): its text deltas are content, its
 * tool-input (`input_json_delta`) and function-call argument deltas tool text.
 */
import type { ChatCompletionChunk } from '../core/openai-types.js';
import type { MessagesStreamEvent } from '../core/messages-types.js';
import type { ResponsesStreamEvent } from '../core/responses-types.js';
import type { AnswerChunk } from './sink.js';

/** What a piece of a chunk's text is: an answer's content, or the arguments (input) of a tool call. */
export type ChunkTextKind = 'content' | 'tool';

/** Receives each piece of a chunk's text with the index of its choice; a piece may be empty. */
export type ChunkTextVisitor = (index: number, text: string, kind: ChunkTextKind) => void;

/** Hands `visit` every piece of text `chunk` carries, in order. */
export function visitChunkText(chunk: AnswerChunk, visit: ChunkTextVisitor): void {
  if (!('choices' in chunk)) {
    const text = eventText(chunk);
    if (text !== undefined) visit(0, text, 'content');
    else {
      const tool = eventToolText(chunk);
      if (tool !== undefined) visit(0, tool, 'tool');
    }
    return;
  }
  for (const choice of chunk.choices as Array<ChatCompletionChunk['choices'][number] & { text?: unknown }>) {
    const delta = choice.delta as { content?: unknown; tool_calls?: unknown } | undefined;
    const content = delta ? delta.content : choice.text;
    if (typeof content === 'string') visit(choice.index, content, 'content');
    if (!delta || !Array.isArray(delta.tool_calls)) continue;
    for (const call of delta.tool_calls as Array<{ function?: { arguments?: unknown } }>) {
      const args = call.function?.arguments;
      if (typeof args === 'string') visit(choice.index, args, 'tool');
    }
  }
}

/** The answer text an Anthropic Messages or Responses event carries. */
export function eventText(chunk: MessagesStreamEvent | ResponsesStreamEvent): string | undefined {
  if (chunk.type === 'content_block_delta') {
    const delta = (chunk as Extract<MessagesStreamEvent, { type: 'content_block_delta' }>).delta;
    return delta.type === 'text_delta' ? delta.text : undefined;
  }
  if (chunk.type === 'response.output_text.delta') {
    const delta = (chunk as ResponsesStreamEvent).delta;
    return typeof delta === 'string' ? delta : undefined;
  }
  return undefined;
}

/** The tool input a Messages event carries, or the function-call arguments of a Responses event. */
function eventToolText(chunk: MessagesStreamEvent | ResponsesStreamEvent): string | undefined {
  if (chunk.type === 'content_block_delta') {
    const delta = (chunk as Extract<MessagesStreamEvent, { type: 'content_block_delta' }>).delta;
    return delta.type === 'input_json_delta' ? delta.partial_json : undefined;
  }
  if (chunk.type === 'response.function_call_arguments.delta') {
    const delta = (chunk as ResponsesStreamEvent).delta;
    return typeof delta === 'string' ? delta : undefined;
  }
  return undefined;
}
