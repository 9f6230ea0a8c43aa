/**
 * Azure OpenAI streams are OpenAI's, with two additions: a first chunk that holds only the prompt's
 * content-filter verdicts (empty `id`, `object` and `choices`), dropped here since it is not a chunk a
 * client can read, and per-choice verdicts, removed in strict mode.
 */
import { createOpenAIStreamTranslator } from '../openai/index.js';
import type { ChatCompletionChunk } from '../openai-types.js';
import type { AdapterRequest, StreamOutput, StreamTranslator } from '../types.js';
import { cleanAzureChunk } from './azure-content-filter.js';

export function createAzureStreamTranslator(req: AdapterRequest, provider: string): StreamTranslator {
  const inner = createOpenAIStreamTranslator(req, provider);
  const clean = (outputs: StreamOutput[]): StreamOutput[] =>
    outputs.flatMap((output): StreamOutput[] => {
      if (output.type !== 'chunk') return [output];
      const chunk = output.chunk as ChatCompletionChunk;
      if (chunk.choices.length === 0 && !chunk.usage) return [];
      const cleaned = cleanAzureChunk(chunk, req.strictCompat);
      return [cleaned === chunk ? output : { type: 'chunk', chunk: cleaned }];
    });
  return {
    push: (event) => clean(inner.push(event)),
    end: () => clean(inner.end()),
    usage: () => inner.usage(),
    finished: () => inner.finished(),
  };
}
