import type { EndpointKind, ProviderResourceKind } from '../types.js';

/**
 * Providers that speak the OpenAI wire format, as data. Adding one is adding a row.
 * `baseUrl` is everything before the OpenAI path (`/chat/completions`…); `custom_host` replaces it.
 */
export interface OpenAICompatibleProvider {
  id: string;
  displayName: string;
  aliases?: string[];
  /** Absent: the provider has no public address and needs `custom_host` (self-hosted servers). */
  baseUrl?: string;
  /** `bearer`: `Authorization: Bearer <api_key>` required; `optional`: sent when given (local servers). */
  auth: 'bearer' | 'optional';
  endpoints: EndpointKind[];
  /** Takes the gateway's `thinking` option as it is. */
  acceptsThinking?: boolean;
  /** Takes `max_completion_tokens` (OpenAI's limit, which its reasoning models require; `max_tokens` is
   * deprecated). Absent: the limit is sent as `max_tokens`, the name every other server knows. */
  maxCompletionTokens?: boolean;
  /** Answers one choice only (`n` above 1 refused): several are made by one call per choice. */
  oneChoice?: boolean;
  /** OpenAI fields the provider refuses (Mistral answers 422 `extra_forbidden` to any field it does not
   * know), left out of the body, each with the reason the capabilities show. */
  omits?: Record<string, string>;
  /** OpenAI fields the provider takes under another name: the field, its name there. */
  renames?: Record<string, string>;
  /** Takes tool call ids only as 9 letters or digits (Mistral): others are sent as such ids, made from
   * their hash (./nine-character-tool-call-ids.ts). */
  nineCharacterToolCallIds?: boolean;
  /** Serves a conversation only when it ends with the user or a tool result (Mistral): one that ends otherwise
   * gets a minimal user turn (./user-turn-last.ts). */
  userTurnLast?: boolean;
  /** The most embedding inputs one request takes, and the most tokens in all, where the provider refuses more
   * (gateway/embeddings-fanout.ts sends a longer list as several calls). */
  embeddingInputsPerCall?: number;
  embeddingTokensPerCall?: number;
  /** OpenAI's organization/project headers from `vendora_organization` / `vendora_project`. */
  vendorHeaders?: boolean;
  /** Its own Files, fine-tuning and Batch APIs at OpenAI's paths (`/files`, `/fine_tuning/jobs`, `/batches`). */
  resources?: ProviderResourceKind[];
  /** The most strings its chat `stop` takes, where the provider documents a bound (OpenAI: 4). */
  stopSequences?: number;
  notes?: string[];
}

export const OPENAI_COMPATIBLE_PROVIDERS: readonly OpenAICompatibleProvider[] = [
  {
    id: 'openai',
    displayName: 'OpenAI',
    aliases: ['vendora'],
    baseUrl: 'https://api.openai.com/v1',
    auth: 'bearer',
    endpoints: ['chat', 'completions', 'embeddings', 'responses'],
    maxCompletionTokens: true,
    vendorHeaders: true,
    resources: ['files', 'fine_tuning', 'fine_tuning_pause', 'batches'],
    stopSequences: 4,
  },
  {
    id: 'groq',
    displayName: 'Groq',
    baseUrl: 'https://api.groq.com/openai/v1',
    auth: 'bearer',
    endpoints: ['chat'],
    maxCompletionTokens: true,
    // Groq refuses n above 1 (400 "'n' : number must be at most 1").
    oneChoice: true,
    notes: [
      "Strict mode leaves out Groq's own `service_tier` (`on_demand`), which OpenAI's schema does not have.",
    ],
  },
  {
    id: 'mistral-ai',
    displayName: 'Mistral AI',
    aliases: ['mistral'],
    baseUrl: 'https://api.mistral.ai/v1',
    auth: 'bearer',
    endpoints: ['chat', 'embeddings'],
    nineCharacterToolCallIds: true,
    userTurnLast: true,
    // "Too many inputs in request, split into more batches." past 256 inputs; past about 16,000 tokens in all a
    // request is refused too (langchain-mistralai batches embeddings to that bound).
    embeddingInputsPerCall: 256,
    embeddingTokensPerCall: 16_000,
    // Its embeddings request names the vector's size output_dimension (codestral-embed).
    renames: { seed: 'random_seed', dimensions: 'output_dimension' },
    notes: [
      'Reasoning models (Magistral) answer content as a list of thinking and text blocks: the text becomes `content`, the thinking a thinking content block (`content_blocks`) unless strict.',
      'Embeddings: a call takes at most 256 inputs and about 16,000 tokens in all (estimated generously: UTF-8 bytes / 3); a longer list goes as several calls, 8 at a time, merged in input order with usage summed.',
      "A 400 refusing the prompt's size (`Prompt contains N tokens, too large for model with M maximum context length`) is OpenAI's `context_length_exceeded` (param `messages`), the message kept.",
    ],
    omits: {
      // The gateway asks every stream for its usage; Mistral sends it on the last chunk unasked.
      stream_options: 'dropped: Mistral refuses it (422) and sends usage on the last chunk unasked',
      // OpenAI's own bookkeeping, which changes nothing in the answer: the OpenAI SDKs' users send them
      // to every provider.
      user: "dropped: Mistral refuses it (422); OpenAI's end-user id for abuse monitoring",
      store: "dropped: Mistral refuses it (422); OpenAI's storage of completions",
      service_tier: "dropped: Mistral refuses it (422); OpenAI's processing tiers",
      metadata:
        "dropped: Mistral refuses it (422); OpenAI's tags of stored completions (the call's log record keeps x-gateway-metadata)",
    },
  },
  {
    id: 'together-ai',
    displayName: 'Together AI',
    aliases: ['together'],
    baseUrl: 'https://api.together.xyz/v1',
    auth: 'bearer',
    endpoints: ['chat', 'completions', 'embeddings'],
  },
  {
    id: 'fireworks-ai',
    displayName: 'Fireworks AI',
    aliases: ['fireworks'],
    baseUrl: 'https://api.fireworks.ai/inference/v1',
    auth: 'bearer',
    endpoints: ['chat', 'completions', 'embeddings'],
  },
  {
    id: 'deepseek',
    displayName: 'DeepSeek',
    baseUrl: 'https://api.deepseek.com/v1',
    auth: 'bearer',
    endpoints: ['chat', 'completions'],
  },
  {
    id: 'x-ai',
    displayName: 'xAI',
    aliases: ['xai'],
    baseUrl: 'https://api.x.ai/v1',
    auth: 'bearer',
    endpoints: ['chat', 'embeddings'],
    maxCompletionTokens: true,
    notes: [
      "completion_tokens counts the reasoning tokens, as OpenAI's does: xAI's chat usage leaves them out (its total_tokens adds them apart), so they are added to it.",
    ],
  },
  {
    id: 'openrouter',
    displayName: 'OpenRouter',
    baseUrl: 'https://openrouter.ai/api/v1',
    auth: 'bearer',
    endpoints: ['chat', 'completions', 'embeddings'],
  },
  {
    id: 'perplexity-ai',
    displayName: 'Perplexity',
    aliases: ['perplexity'],
    baseUrl: 'https://api.perplexity.ai',
    auth: 'bearer',
    endpoints: ['chat'],
  },
  {
    id: 'cerebras',
    displayName: 'Cerebras',
    baseUrl: 'https://api.cerebras.ai/v1',
    auth: 'bearer',
    endpoints: ['chat', 'completions'],
    maxCompletionTokens: true,
  },
  {
    id: 'deepinfra',
    displayName: 'DeepInfra',
    baseUrl: 'https://api.deepinfra.com/v1/openai',
    auth: 'bearer',
    endpoints: ['chat', 'completions', 'embeddings'],
  },
  {
    id: 'ollama',
    displayName: 'Ollama',
    baseUrl: 'http://127.0.0.1:11434/v1',
    auth: 'optional',
    endpoints: ['chat', 'completions', 'embeddings'],
    notes: ['Local server: set `custom_host` when it does not listen on 127.0.0.1:11434.'],
  },
  {
    id: 'openai-compatible',
    displayName: 'Any OpenAI-compatible server (vLLM, LM Studio, llama.cpp, TGI…)',
    aliases: ['vllm', 'custom'],
    auth: 'optional',
    endpoints: ['chat', 'completions', 'embeddings'],
    acceptsThinking: true,
    notes: ["Needs `custom_host`: the server's base URL including its `/v1`."],
  },
];
