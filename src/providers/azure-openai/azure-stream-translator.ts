/**
 * Azure streams are OpenAI's with additions: a first event that holds only the prompt's content-filter
 * verdicts (empty `id`, `object` and `choices`), dropped here since it is not a chunk a client can read;
 * annotation events of the answer's verdicts (the asynchronous filter's, and one after the last chunk),
 * whose choices have no `delta` and whose `id`, `object` and `model` are empty; and chunks normalised by
 * ./normalise-azure-response.ts (verdicts removed in strict mode, reasoning offered as content blocks
 * otherwise, invalid nulls removed).
 */
import { createOpenAIStreamTranslator } from '../openai/index.js';
import type { ChatCompletionChunk, Usage } from '../../core/openai-types.js';
import type { AdapterRequest, StreamOutput, StreamTranslator } from '../types.js';
import { normaliseAzureChunk } from './normalise-azure-response.js';

export function createAzureStreamTranslator(req: AdapterRequest, provider: string): StreamTranslator {
  const inner = createOpenAIStreamTranslator(req, provider);
  let usage: Usage | undefined;
  /** The stream's own chunk, whose id, time and model an annotation is given. */
  let last: ChatCompletionChunk | undefined;
  const clean = (outputs: StreamOutput[]): StreamOutput[] =>
    outputs.flatMap((output): StreamOutput[] => {
      if (output.type !== 'chunk') return [output];
      let chunk = output.chunk as ChatCompletionChunk;
      if (chunk.choices.length === 0 && !chunk.usage) return [];
      if (isAnnotation(chunk)) {
        // Strict mode keeps only OpenAI's fields, and an annotation has nothing else; outside it, the
        // verdicts go out as a chunk of the stream with an empty delta.
        if (req.strictCompat || last === undefined) return [];
        chunk = annotationChunk(chunk, last);
      } else last = chunk;
      const normalised = normaliseAzureChunk(chunk, req.strictCompat);
      if (normalised.usage) usage = normalised.usage;
      return [{ type: 'chunk', chunk: normalised }];
    });
  return {
    push: (event) => clean(inner.push(event)),
    end: () => clean(inner.end()),
    usage: () => usage ?? inner.usage(),
    serviceTier: () => inner.serviceTier?.(),
    finished: () => inner.finished(),
  };
}

/** An event of content-filter verdicts alone: none of its choices has a delta. */
function isAnnotation(chunk: ChatCompletionChunk): boolean {
  return (
    chunk.choices.length > 0 &&
    chunk.choices.every((choice) => typeof choice.delta !== 'object' || choice.delta === null)
  );
}

function annotationChunk(annotation: ChatCompletionChunk, of: ChatCompletionChunk): ChatCompletionChunk {
  return {
    ...annotation,
    id: of.id,
    object: 'chat.completion.chunk',
    created: of.created,
    model: of.model,
    choices: annotation.choices.map((choice) => ({ ...choice, delta: {} })),
  };
}
