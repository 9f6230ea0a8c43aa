/**
 * The Cohere v2 wire shapes (Chat `POST /v2/chat`, Embed `POST /v2/embed`), limited to what the adapter
 * writes and reads. Field names are Cohere's own.
 */

export type CohereTextPart = { type: 'text'; text: string };
export type CohereImagePart = {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
};
export type CohereThinkingPart = { type: 'thinking'; thinking: string };

export interface CohereToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type CohereMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | Array<CohereTextPart | CohereImagePart> }
  | {
      role: 'assistant';
      content?: string | CohereTextPart[];
      tool_calls?: CohereToolCall[];
      tool_plan?: string;
    }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface CohereTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

export interface CohereChatBody {
  model: string;
  messages: CohereMessage[];
  stream?: boolean;
  tools?: CohereTool[];
  strict_tools?: boolean;
  tool_choice?: 'REQUIRED' | 'NONE';
  response_format?: { type: 'json_object'; json_schema?: Record<string, unknown> };
  max_tokens?: number;
  stop_sequences?: string[];
  temperature?: number;
  p?: number;
  seed?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  thinking?: { type: 'enabled' | 'disabled'; token_budget?: number };
}

export interface CohereUsage {
  billed_units?: { input_tokens?: number; output_tokens?: number };
  tokens?: { input_tokens?: number; output_tokens?: number };
  cached_tokens?: number;
}

export interface CohereChatResponse {
  id: string;
  finish_reason?: string;
  message?: {
    role?: string;
    content?: Array<CohereTextPart | CohereThinkingPart | { type: string }>;
    tool_plan?: string;
    tool_calls?: CohereToolCall[];
  };
  usage?: CohereUsage;
}

/** One event of a v2 chat stream; `type` names it (also sent as the SSE `event:` name). */
export interface CohereStreamEvent {
  type: string;
  id?: string;
  index?: number;
  delta?: {
    message?: {
      content?: { type?: string; text?: string; thinking?: string };
      tool_plan?: string;
      tool_calls?: { id?: string; type?: string; function?: { name?: string; arguments?: string } };
    };
    finish_reason?: string;
    error?: string;
    usage?: CohereUsage;
  };
}

export type CohereInputType = 'search_document' | 'search_query' | 'classification' | 'clustering';

export interface CohereEmbedBody {
  model: string;
  texts: string[];
  input_type: CohereInputType;
  embedding_types: ['float'];
  output_dimension?: number;
}

export interface CohereEmbedResponse {
  id?: string;
  embeddings?: { float?: number[][] };
  meta?: { billed_units?: { input_tokens?: number } };
}

/** Cohere's error body: `{ "id": "...", "message": "invalid api token" }`. */
export interface CohereErrorBody {
  id?: string;
  message?: string;
}
