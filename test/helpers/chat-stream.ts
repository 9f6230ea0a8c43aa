/**
 * Reads a chat completion stream of the openai SDK to its end, every chunk checked against the OpenAPI
 * document: the chunks, the text of the first choice, its last finish_reason, its tool calls (each one's id,
 * name and arguments joined from all its deltas) and the last usage sent.
 */
import type OpenAI from 'openai';
import { expectOpenAPIValid } from './openapi.js';

export interface ReadChatStream {
  chunks: OpenAI.Chat.Completions.ChatCompletionChunk[];
  text: string;
  finish: string | null;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  usage: OpenAI.CompletionUsage | undefined;
}

export async function readChatStream(
  stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>,
): Promise<ReadChatStream> {
  const read: ReadChatStream = { chunks: [], text: '', finish: null, toolCalls: [], usage: undefined };
  for await (const chunk of stream) {
    expectOpenAPIValid('CreateChatCompletionStreamResponse', chunk);
    read.chunks.push(chunk);
    read.text += chunk.choices[0]?.delta?.content ?? '';
    read.finish = chunk.choices[0]?.finish_reason ?? read.finish;
    for (const delta of chunk.choices[0]?.delta?.tool_calls ?? []) {
      const call = (read.toolCalls[delta.index] ??= { id: '', name: '', arguments: '' });
      call.id += delta.id ?? '';
      call.name += delta.function?.name ?? '';
      call.arguments += delta.function?.arguments ?? '';
    }
    if (chunk.usage) read.usage = chunk.usage;
  }
  return read;
}
