import type { ChatCompletionChunk, FinishReason, Usage } from '../../core/openai-types.js';

/** What every chunk of one streamed answer shares. */
export interface ChunkIdentity {
  id: string;
  model: string;
  created: number;
}

/** One chunk of choice 0 carrying `delta` (and a finish reason on the last content chunk). */
export function choiceChunk(
  identity: ChunkIdentity,
  delta: ChatCompletionChunk['choices'][number]['delta'],
  finishReason: FinishReason | null = null,
): ChatCompletionChunk {
  return {
    id: identity.id,
    object: 'chat.completion.chunk',
    created: identity.created,
    model: identity.model,
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
  };
}

/** The closing usage chunk of `stream_options.include_usage`: no choices, usage set. */
export function usageChunk(identity: ChunkIdentity, usage: Usage): ChatCompletionChunk {
  return {
    id: identity.id,
    object: 'chat.completion.chunk',
    created: identity.created,
    model: identity.model,
    choices: [],
    usage,
  };
}

export function unixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
