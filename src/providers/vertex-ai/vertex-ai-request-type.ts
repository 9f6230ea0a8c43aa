/**
 * Which capacity Vertex AI serves a target's calls from, its `cloudb_request_type`: Vertex's
 * `X-Vertex-AI-LLM-Request-Type` header, `dedicated` (the project's Provisioned Throughput only, a 429 beyond
 * it) or `shared` (pay-as-you-go only). Without it Vertex serves from Provisioned Throughput first and the rest
 * pay-as-you-go. Which pay-as-you-go, its `cloudb_shared_request_type`: Vertex's
 * `X-Vertex-AI-LLM-Shared-Request-Type` header, `priority` (Priority PayGo) or `flex` (Flex PayGo), served on
 * the global endpoint only; without it, standard pay-as-you-go.
 */
import { GatewayError } from '../../core/errors.js';
import type { ChatCompletionChunk, Usage } from '../../core/openai-types.js';
import type { ProviderTarget, StreamOutput, StreamTranslator } from '../types.js';
import { VERTEX_GLOBAL_REGION } from './vertex-ai-urls.js';

const REQUEST_TYPE_HEADER = 'x-vertex-ai-llm-request-type';
const SHARED_REQUEST_TYPE_HEADER = 'x-vertex-ai-llm-shared-request-type';

/** Vertex's `trafficType` for a call served from Provisioned Throughput, as Gemini's answers name it. */
const PROVISIONED_THROUGHPUT = 'PROVISIONED_THROUGHPUT';

export function vertexRequestTypeHeaders(target: ProviderTarget): Record<string, string> {
  const type = target.cloudb_request_type;
  const shared = target.cloudb_shared_request_type;
  const headers: Record<string, string> = {};
  if (type !== undefined) headers[REQUEST_TYPE_HEADER] = type;
  if (shared !== undefined) {
    checkSharedRequestType(target);
    headers[SHARED_REQUEST_TYPE_HEADER] = shared;
  }
  return headers;
}

/** The settings that say which capacity Vertex AI serves a target's calls from. */
export type VertexCapacity = Pick<
  ProviderTarget,
  'cloudb_region' | 'cloudb_request_type' | 'cloudb_shared_request_type'
>;

/** Why Vertex AI would not serve a target's `cloudb_shared_request_type` with its other settings. */
export interface SharedRequestTypeRefusal {
  /** The setting beside it that rules it out. */
  with: 'cloudb_region' | 'cloudb_request_type';
  /** Said of `cloudb_shared_request_type`: the words that follow its name. */
  reason: string;
}

/**
 * The one rule of `cloudb_shared_request_type`, applied wherever the settings meet: a config's node, a
 * stored credential, a node beside the credential it names, a call. Vertex serves Priority and Flex PayGo on
 * its global endpoint only, and refuses them on a regional or multi-regional one. With `dedicated`, Vertex
 * serves from Provisioned Throughput only, so the pay-as-you-go asked for would never apply.
 */
export function sharedRequestTypeRefusal(capacity: VertexCapacity): SharedRequestTypeRefusal | undefined {
  const shared = capacity.cloudb_shared_request_type;
  if (shared === undefined) return undefined;
  const region = capacity.cloudb_region;
  if (region !== undefined && region !== VERTEX_GLOBAL_REGION) {
    return {
      with: 'cloudb_region',
      reason: `'${shared}' is served on Vertex AI's global endpoint only: cloudb_region must be '${VERTEX_GLOBAL_REGION}' (got '${region}')`,
    };
  }
  if (capacity.cloudb_request_type === 'dedicated') {
    return {
      with: 'cloudb_request_type',
      reason: `cannot be given with cloudb_request_type 'dedicated': Vertex AI then serves from Provisioned Throughput only, never on '${shared}' pay-as-you-go`,
    };
  }
  return undefined;
}

/** The rule, on the settings a call meets: a config's own are refused when it is read, and a stored
 * credential's when stored, but the two may meet only here (a config sent with the request, or stored before
 * the credential changed under it). */
function checkSharedRequestType(target: ProviderTarget): void {
  const refusal = sharedRequestTypeRefusal(target);
  if (refusal === undefined) return;
  throw new GatewayError('provider_config_error', `cloudb_shared_request_type ${refusal.reason}`, {
    param: 'cloudb_shared_request_type',
  });
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
