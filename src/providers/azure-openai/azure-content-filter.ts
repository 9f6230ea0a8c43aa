/**
 * Azure adds its content-filter verdicts (and, for some hosted models, `reasoning_content`) to OpenAI's
 * shapes. Strict mode removes them; otherwise the verdicts stay and the reasoning is offered as a
 * thinking content block.
 */
import type { ChatCompletionChunk, ContentBlock } from '../openai-types.js';

const AZURE_TOP_LEVEL = ['prompt_filter_results', 'prompt_annotations'] as const;
const AZURE_PER_CHOICE = [
  'content_filter_results',
  'content_filter_result',
  'content_filter_offsets',
] as const;

type Json = Record<string, unknown>;

/** A cleaned copy of a chat completion or text completion; the input is not changed. */
export function cleanAzureResponse(body: unknown, strict: boolean): unknown {
  if (!isObject(body) || !Array.isArray(body.choices)) return body;
  const out: Json = { ...body };
  if (strict) for (const key of AZURE_TOP_LEVEL) delete out[key];
  out.choices = body.choices.map((choice: unknown) => {
    if (!isObject(choice)) return choice;
    const cleaned: Json = { ...choice };
    if (strict) for (const key of AZURE_PER_CHOICE) delete cleaned[key];
    if (isObject(choice.message)) cleaned.message = withThinking(choice.message, strict);
    return cleaned;
  });
  return out;
}

/** A cleaned copy of a stream chunk, or the same object when there was nothing to change. */
export function cleanAzureChunk(chunk: ChatCompletionChunk, strict: boolean): ChatCompletionChunk {
  const raw = chunk as unknown as Json;
  const needsWork =
    (strict && AZURE_TOP_LEVEL.some((key) => key in raw)) ||
    chunk.choices.some(
      (choice) =>
        (strict && AZURE_PER_CHOICE.some((key) => key in choice)) ||
        (isObject(choice.delta) && 'reasoning_content' in choice.delta),
    );
  if (!needsWork) return chunk;
  const out: Json = { ...raw };
  if (strict) for (const key of AZURE_TOP_LEVEL) delete out[key];
  out.choices = chunk.choices.map((choice) => {
    const cleaned: Json = { ...choice };
    if (strict) for (const key of AZURE_PER_CHOICE) delete cleaned[key];
    if (isObject(choice.delta)) {
      const delta: Json = { ...choice.delta };
      const reasoning = delta.reasoning_content;
      delete delta.reasoning_content;
      if (!strict && typeof reasoning === 'string' && reasoning !== '') {
        delta.content_blocks = [{ index: 0, delta: { type: 'thinking', thinking: reasoning } }];
      }
      cleaned.delta = delta;
    }
    return cleaned;
  });
  return out as unknown as ChatCompletionChunk;
}

function withThinking(message: Json, strict: boolean): Json {
  if (!('reasoning_content' in message)) return message;
  const out: Json = { ...message };
  const reasoning = out.reasoning_content;
  delete out.reasoning_content;
  if (!strict && typeof reasoning === 'string' && reasoning !== '') {
    const blocks: ContentBlock[] = [{ type: 'thinking', thinking: reasoning }];
    if (typeof out.content === 'string' && out.content !== '')
      blocks.push({ type: 'text', text: out.content });
    out.content_blocks = blocks;
  }
  return out;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
