/**
 * Azure streams are OpenAI's with additions: a first event that holds only the prompt's content-filter
 * verdicts (empty `id`, `object` and `choices`), dropped here since it is not a chunk a client can read,
 * and chunks normalised by ./normalise-azure-response.ts (verdicts removed in strict mode, reasoning
 * offered as content blocks otherwise, invalid nulls removed).
 */
import { createOpenAIStreamTranslator } from '../openai/index.js';
import type { ChatCompletionChunk, Usage } from '../../core/openai-types.js';
import type { AdapterRequest, StreamOutput, StreamTranslator } from '../types.js';
import { normaliseAzureChunk } from './normalise-azure-response.js';

export function createAzureStreamTranslator(req: AdapterRequest, provider: string): StreamTranslator {
  const inner = createOpenAIStreamTranslator(req, provider);
  let usage: Usage | undefined;
  const clean = (outputs: StreamOutput[]): StreamOutput[] =>
    outputs.flatMap((output): StreamOutput[] => {
      if (output.type !== 'chunk') return [output];
      const chunk = output.chunk as ChatCompletionChunk;
      if (chunk.choices.length === 0 && !chunk.usage) return [];
      const normalised = normaliseAzureChunk(chunk, req.strictCompat);
      if (normalised.usage) usage = normalised.usage;
      return [{ type: 'chunk', chunk: normalised }];
    });
  return {
    push: (event) => clean(inner.push(event)),
    end: () => clean(inner.end()),
    usage: () => usage ?? inner.usage(),
    finished: () => inner.finished(),
  };
}
