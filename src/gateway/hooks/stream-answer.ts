/**
 * A streamed answer as output checks see it: the chunks assembled into the JSON answer of the same
 * operation (a chat completion or a text completion), and a mutator's rewritten answer put back into the
 * same chunks (each choice's new text in its first text chunk, the rest of its text chunks emptied), so
 * the client gets the stream it asked for, with its ids, finish reasons and usage unchanged.
 */
import type { ChatCompletionChunk, TextCompletion } from '../../core/openai-types.js';
import type { OpenAIChunk } from '../sink.js';

type Json = Record<string, unknown>;

function isChat(chunk: OpenAIChunk): chunk is ChatCompletionChunk {
  return chunk.object === 'chat.completion.chunk';
}

export function assembleAnswer(chunks: readonly OpenAIChunk[]): Json {
  const first = chunks[0];
  const texts = new Map<number, string>();
  const finish = new Map<number, string | null>();
  let usage: unknown;
  for (const chunk of chunks) {
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      const piece = 'delta' in choice ? choice.delta.content : choice.text;
      if (typeof piece === 'string') texts.set(choice.index, (texts.get(choice.index) ?? '') + piece);
      else if (!texts.has(choice.index)) texts.set(choice.index, '');
      if (choice.finish_reason) finish.set(choice.index, choice.finish_reason);
    }
  }
  const indexes = [...texts.keys()].sort((a, b) => a - b);
  const chat = first === undefined || isChat(first);
  return {
    id: first?.id,
    object: chat ? 'chat.completion' : 'text_completion',
    created: first?.created,
    model: first?.model,
    choices: indexes.map((index) =>
      chat
        ? {
            index,
            message: { role: 'assistant', content: texts.get(index) ?? '' },
            finish_reason: finish.get(index) ?? null,
          }
        : { index, text: texts.get(index) ?? '', finish_reason: finish.get(index) ?? null },
    ),
    ...(usage ? { usage } : {}),
  };
}

/** Each choice's text in a rewritten answer, by index. */
function textsOf(answer: Json): Map<number, string> {
  const texts = new Map<number, string>();
  const choices = Array.isArray(answer.choices) ? (answer.choices as Json[]) : [];
  choices.forEach((choice, i) => {
    const index = typeof choice.index === 'number' ? choice.index : i;
    const message = choice.message as { content?: unknown } | undefined;
    const text = message ? message.content : choice.text;
    if (typeof text === 'string') texts.set(index, text);
  });
  return texts;
}

/** The chunks carrying `answer`'s text in place of their own. */
export function rewriteChunks(chunks: readonly OpenAIChunk[], answer: Json): OpenAIChunk[] {
  const texts = textsOf(answer);
  const placed = new Set<number>();
  return chunks.map((chunk) => {
    let changed = false;
    const choices = chunk.choices.map((choice) => {
      const replacement = texts.get(choice.index);
      const piece = 'delta' in choice ? choice.delta.content : choice.text;
      if (replacement === undefined || typeof piece !== 'string' || piece.length === 0) return choice;
      changed = true;
      const text = placed.has(choice.index) ? '' : replacement;
      placed.add(choice.index);
      return 'delta' in choice
        ? { ...choice, delta: { ...choice.delta, content: text } }
        : { ...choice, text };
    });
    return changed ? ({ ...chunk, choices } as ChatCompletionChunk | TextCompletion) : chunk;
  });
}
