/**
 * Which capacity Vertex AI serves a target's calls from, its `cloudb_request_type`: Vertex's
 * `X-Vertex-AI-LLM-Request-Type` header, `dedicated` (the project's Provisioned Throughput only, a 429 beyond
 * it) or `shared` (pay-as-you-go only). Without it Vertex serves from Provisioned Throughput first and the rest
 * pay-as-you-go.
 */
import type { ChatCompletionChunk, Usage } from '../../core/openai-types.js';
import type { ProviderTarget, StreamOutput, StreamTranslator } from '../types.js';

const REQUEST_TYPE_HEADER = 'x-vertex-ai-llm-request-type';

/** Vertex's `trafficType` for a call served from Provisioned Throughput, as Gemini's answers name it. */
const PROVISIONED_THROUGHPUT = 'PROVISIONED_THROUGHPUT';

export function vertexRequestTypeHeaders(target: ProviderTarget): Record<string, string> {
  const type = target.cloudb_request_type;
  return type === undefined ? {} : { [REQUEST_TYPE_HEADER]: type };
}

/**
 * Claude's answers on Vertex name no traffic type, but a `dedicated` target's answers can only have been served
 * from Provisioned Throughput (Vertex refuses a call beyond it with 429): their usage says so, as a Gemini
 * answer's does, so that they are priced as prepaid.
 */
export function withDedicatedTraffic(target: ProviderTarget, usage: Usage | undefined): Usage | undefined {
  if (!usage || target.cloudb_request_type !== 'dedicated') return usage;
  return { ...usage, traffic_type: PROVISIONED_THROUGHPUT };
}

/**
 * A Claude stream's translator whose usage says it was served from Provisioned Throughput when the target
 * asked for nothing else (withDedicatedTraffic). `chunks`: the OpenAI usage chunk says so too (a chat stream);
 * a relayed Messages stream's events are Anthropic's and go out as they came.
 */
export function dedicatedTrafficStream(
  target: ProviderTarget,
  inner: StreamTranslator,
  options: { chunks: boolean },
): StreamTranslator {
  if (target.cloudb_request_type !== 'dedicated') return inner;
  const marked = (outputs: StreamOutput[]): StreamOutput[] =>
    options.chunks ? outputs.map((output) => markedChunk(target, output)) : outputs;
  return {
    push: (event) => marked(inner.push(event)),
    end: () => marked(inner.end()),
    usage: () => withDedicatedTraffic(target, inner.usage()),
    serviceTier: () => inner.serviceTier?.(),
    finished: () => inner.finished(),
  };
}

function markedChunk(target: ProviderTarget, output: StreamOutput): StreamOutput {
  if (output.type !== 'chunk') return output;
  const chunk = output.chunk as ChatCompletionChunk;
  if (chunk.object !== 'chat.completion.chunk' || !chunk.usage) return output;
  return { type: 'chunk', chunk: { ...chunk, usage: withDedicatedTraffic(target, chunk.usage) } };
}
