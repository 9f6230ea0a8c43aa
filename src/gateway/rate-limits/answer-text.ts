/**
 * How much text a model call's answer carries, for a tokens policy to settle an answer that gave no usage
 * to (token-estimate.ts, tokensWithoutUsage): its choices' content and the arguments of its tool calls,
 * in each operation's shape. A whole answer is read by the output checks' reader of every answer text
 * (hooks/text.ts); a stream is counted chunk by chunk as it goes by (AnswerTextCount), nothing of it kept.
 */
import type { HookRequestType } from '../../hooks/check-types.js';
import { allAnswerTexts } from '../../hooks/text.js';
import { visitChunkText } from '../chunk-text.js';
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
    visitChunkText(chunk, this.count);
    return super.chunk(chunk, raw);
  }

  /** Every piece of a chunk's text counts: content and tool-call arguments (chunk-text.ts). */
  private readonly count = (_index: number, text: string): void => {
    this.length += text.length;
  };
}
