/**
 * The OpenAI wire shapes the gateway speaks to clients, as adapters read and produce them.
 * Request bodies are validated at the HTTP boundary (src/server/schemas); these are the views adapters
 * translate from and to. Field names are OpenAI's, snake_case, never rewritten.
 */

export type ChatRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function';

export type ContentPart =
  | { type: 'text'; text: string; cache_control?: Record<string, unknown> }
  | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } }
  | { type: 'input_audio'; input_audio: { data: string; format: string } }
  | { type: 'file'; file: { file_id?: string; file_data?: string; filename?: string } }
  | { type: string; [key: string]: unknown };

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: ChatRole;
  content?: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  function_call?: { name: string; arguments: string };
  /** Reasoning carried back in multi-turn history (non-strict mode). */
  content_blocks?: ContentBlock[];
  [key: string]: unknown;
}

export interface FunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export type ToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      json_schema: { name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean };
    };

export interface ThinkingOption {
  type: 'enabled' | 'disabled';
  budget_tokens?: number;
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean } | null;
  n?: number;
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  stop?: string | string[] | null;
  seed?: number;
  user?: string;
  tools?: FunctionTool[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
  functions?: Array<{ name: string; description?: string; parameters?: Record<string, unknown> }>;
  function_call?: 'none' | 'auto' | { name: string };
  response_format?: ResponseFormat;
  frequency_penalty?: number;
  presence_penalty?: number;
  logit_bias?: Record<string, number>;
  logprobs?: boolean;
  top_logprobs?: number;
  /** The reasoning-content option of the spec (only with strict_compat_compliance false). */
  thinking?: ThinkingOption;
  [key: string]: unknown;
}

export interface CompletionRequest {
  model: string;
  prompt: string | string[] | number[] | number[][];
  stream?: boolean;
  stream_options?: { include_usage?: boolean } | null;
  max_tokens?: number;
  n?: number;
  [key: string]: unknown;
}

export interface EmbeddingRequest {
  model: string;
  input: string | string[] | number[] | number[][];
  encoding_format?: 'float' | 'base64';
  dimensions?: number;
  user?: string;
  [key: string]: unknown;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; audio_tokens?: number };
  completion_tokens_details?: {
    reasoning_tokens?: number;
    accepted_prediction_tokens?: number;
    rejected_prediction_tokens?: number;
    audio_tokens?: number;
  };
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
      content_blocks?: Array<{ index: number; delta: ContentBlock }>;
    };
    finish_reason: FinishReason | null;
    logprobs?: unknown;
  }>;
  usage?: Usage | null;
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
