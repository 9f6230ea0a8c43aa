import type { ChatCompletionChunk, Usage } from '../../../src/core/openai-types.js';
import { createSseDecoder } from '../../../src/providers/shared/sse-decoder.js';
import type { AdapterRequest, ProviderAdapter, StreamOutput } from '../../../src/providers/types.js';
import { createStreamTranslator } from '../operations.js';

export function chatRequest(
  body: Record<string, unknown>,
  overrides: Partial<AdapterRequest> = {},
): AdapterRequest<'chat'> {
  // The body reaches the adapter as the test wrote it, unvalidated: some are bodies the schema would refuse.
  return {
    endpoint: 'chat',
    body: { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'Hi' }], ...body },
    stream: body.stream === true,
    target: { provider: 'google', api_key: 'test-key' },
    forwardHeaders: {},
    clientHeaders: {},
    strictCompat: false,
    ...overrides,
  } as AdapterRequest<'chat'>;
}

/** Feeds an SSE body through the adapter's decoder and translator in small, uneven pieces. */
export function replayStream(adapter: ProviderAdapter, req: AdapterRequest, sse: string): StreamOutput[] {
  const decoder = adapter.createFrameDecoder?.() ?? createSseDecoder();
  const translator = createStreamTranslator(adapter, req);
  const bytes = new TextEncoder().encode(sse);
  const out: StreamOutput[] = [];
  for (let i = 0, step = 7; i < bytes.length; i += step, step = (step % 53) + 11) {
    for (const event of decoder.push(bytes.slice(i, i + step))) out.push(...translator.push(event));
  }
  for (const event of decoder.end()) out.push(...translator.push(event));
  out.push(...translator.end());
  return out;
}

export interface Assembled {
  text: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  finishReason: string | null;
  usage: Usage | undefined;
  chunks: ChatCompletionChunk[];
  done: boolean;
  thinking: string;
  signatures: string[];
}

/** What a client would rebuild from the chunks of choice 0. */
export function assemble(outputs: StreamOutput[]): Assembled {
  const result: Assembled = {
    text: '',
    toolCalls: [],
    finishReason: null,
    usage: undefined,
    chunks: [],
    done: false,
    thinking: '',
    signatures: [],
  };
  for (const output of outputs) {
    if (output.type === 'done') result.done = true;
    if (output.type !== 'chunk') continue;
    const chunk = output.chunk as ChatCompletionChunk;
    result.chunks.push(chunk);
    if (chunk.usage) result.usage = chunk.usage;
    for (const choice of chunk.choices) {
      if (choice.index !== 0) continue;
      if (choice.delta.content) result.text += choice.delta.content;
      for (const call of choice.delta.tool_calls ?? []) {
        const slot = (result.toolCalls[call.index] ??= { id: '', name: '', arguments: '' });
        if (call.id) slot.id = call.id;
        if (call.function?.name) slot.name += call.function.name;
        if (call.function?.arguments) slot.arguments += call.function.arguments;
      }
      for (const block of choice.delta.content_blocks ?? []) {
        if (block.delta.thinking) result.thinking += block.delta.thinking;
        if (block.delta.signature) result.signatures.push(block.delta.signature);
      }
      if (choice.finish_reason) result.finishReason = choice.finish_reason;
    }
  }
  return result;
}
