/**
 * Reads a chat completion stream of the openai SDK to its end, every chunk checked against the OpenAPI
 * document: the chunks, the text of the first choice, its last finish_reason and the last usage sent.
 */
import type OpenAI from 'openai';
import { expectOpenAPIValid } from './openapi.js';

export interface ReadChatStream {
  chunks: OpenAI.Chat.Completions.ChatCompletionChunk[];
  text: string;
  finish: string | null;
  usage: OpenAI.CompletionUsage | undefined;
}

export async function readChatStream(
  stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>,
): Promise<ReadChatStream> {
  const read: ReadChatStream = { chunks: [], text: '', finish: null, usage: undefined };
  for await (const chunk of stream) {
    expectOpenAPIValid('CreateChatCompletionStreamResponse', chunk);
    read.chunks.push(chunk);
    read.text += chunk.choices[0]?.delta?.content ?? '';
    read.finish = chunk.choices[0]?.finish_reason ?? read.finish;
    if (chunk.usage) read.usage = chunk.usage;
  }
  return read;
}
