/**
 * The OpenAI wire shapes of the answers the gateway gives clients, as adapters produce them. Request bodies
 * are not here: their type is their schema's (src/core/schemas), validated at the boundary. Field names are
 * OpenAI's, snake_case, never rewritten.
 */

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: {
    cached_tokens?: number;
    audio_tokens?: number;
    /** Not OpenAI's: prompt tokens written to a provider's prompt cache (Anthropic, Bedrock), priced apart. */
    cache_write_tokens?: number;
    /** Not OpenAI's: those of `cache_write_tokens` written to be kept an hour (Anthropic), priced higher. */
    cache_write_1h_tokens?: number;
    /** Not OpenAI's: image tokens of the prompt when the provider counts them apart (Gemini). */
    image_tokens?: number;
  };
  completion_tokens_details?: {
    reasoning_tokens?: number;
    accepted_prediction_tokens?: number;
    rejected_prediction_tokens?: number;
    audio_tokens?: number;
  };
  /** Not OpenAI's: the uses of server-side tools the provider bills apart, per use (web searches, Anthropic's
   * web fetches, a Gemini answer grounded with Google Search), when there were any. */
  server_tool_use?: { web_search_requests?: number; web_fetch_requests?: number; grounded_prompts?: number };
  /** Not OpenAI's: the capacity that served the call, as the provider names it (Vertex AI's
   * `usageMetadata.trafficType`: `ON_DEMAND`, `PROVISIONED_THROUGHPUT` …). Tokens served from Provisioned
   * Throughput are prepaid; Priority and Flex PayGo (`ON_DEMAND_PRIORITY`, `ON_DEMAND_FLEX`) are priced on
   * the `priority` and `flex` tiers (docs/cost.md). */
  traffic_type?: string;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

/** Thinking returned by providers that expose it; only present when strict_compat_compliance is false. */
export interface ContentBlock {
  type: 'text' | 'thinking' | 'redacted_thinking';
  text?: string;
  thinking?: string;
  signature?: string;
  data?: string;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  system_fingerprint?: string | null;
  choices: Array<{
    index: number;
    message: {
      role: 'assistant';
      content: string | null;
      refusal: string | null;
      tool_calls?: ToolCall[];
      function_call?: { name: string; arguments: string };
      content_blocks?: ContentBlock[];
    };
    finish_reason: FinishReason | null;
    logprobs: unknown;
  }>;
  usage?: Usage;
  service_tier?: string | null;
}

export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  system_fingerprint?: string | null;
  choices: Array<{
    index: number;
    delta: {
      role?: 'assistant';
      content?: string | null;
      refusal?: string | null;
      tool_calls?: ToolCallDelta[];
      /** The deprecated form of a call, answering a request made with `functions`. */
      function_call?: { name?: string; arguments?: string };
      content_blocks?: Array<{ index: number; delta: ContentBlock }>;
    };
    finish_reason: FinishReason | null;
    logprobs?: unknown;
  }>;
  usage?: Usage | null;
  service_tier?: string | null;
}

export interface TextCompletion {
  id: string;
  object: 'text_completion';
  created: number;
  model: string;
  system_fingerprint?: string;
  choices: Array<{ index: number; text: string; finish_reason: FinishReason | null; logprobs: unknown }>;
  usage?: Usage;
}

export interface EmbeddingResponse {
  object: 'list';
  data: Array<{ object: 'embedding'; index: number; embedding: number[] | string }>;
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}
