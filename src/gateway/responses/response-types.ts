/**
 * The Responses API's wire shapes the gateway produces (the OpenAI document's `Response`, its output items
 * and its stream events). Field names are OpenAI's, never rewritten.
 */
import type {
  OtherResponseItem,
  ResponseInputItem,
  ResponsesRequest,
} from '../../core/schemas/responses-request.js';

export interface OutputTextPart {
  type: 'output_text';
  text: string;
  annotations: unknown[];
  logprobs?: unknown[];
}

export interface OutputMessageItem {
  type: 'message';
  id: string;
  role: 'assistant';
  status: 'in_progress' | 'completed' | 'incomplete';
  content: Array<OutputTextPart | { type: 'refusal'; refusal: string }>;
}

export interface FunctionCallOutputItem {
  type: 'function_call';
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: 'in_progress' | 'completed' | 'incomplete';
}

export interface ReasoningOutputItem {
  type: 'reasoning';
  id: string;
  summary: Array<{ type: 'summary_text'; text: string }>;
  content?: Array<{ type: 'reasoning_text'; text: string }>;
  /** The provider's signature of its thinking, sent back with it on the next turn. */
  encrypted_content?: string | null;
  status?: 'in_progress' | 'completed' | 'incomplete';
}

export type OutputItem = OutputMessageItem | FunctionCallOutputItem | ReasoningOutputItem;

/** An input item as stored and listed: every item has an id. */
export type StoredInputItem = (ResponseInputItem | OtherResponseItem) & { id: string };

/** Any item of a conversation: what the client sent, or what a model answered. */
export type ConversationItem = StoredInputItem | OutputItem;

/** An item of a kind the gateway reads: a message, a function call or its output, reasoning. */
export type KnownConversationItem = (ResponseInputItem & { id: string }) | OutputItem;

const KNOWN_ITEM_TYPES: ReadonlySet<string> = new Set([
  'message',
  'function_call',
  'function_call_output',
  'reasoning',
]);

/**
 * Whether the gateway reads this item; any other (a built-in tool's call or output that a native
 * provider answered with: `web_search_call`, `file_search_call` …) is kept and relayed as it is.
 */
export function isKnownItem(item: ConversationItem): item is KnownConversationItem {
  return item.type === undefined || KNOWN_ITEM_TYPES.has(item.type);
}

/** `queued` and `cancelled` only a background response has (OpenAI's list; background.ts). */
export type ResponseStatus = 'completed' | 'failed' | 'in_progress' | 'incomplete' | 'queued' | 'cancelled';

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  completed_at?: number | null;
  status: ResponseStatus;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  model: string;
  output: OutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: { effort: string | null; summary: string | null; generate_summary: string | null } | null;
  store: boolean;
  temperature: number | null;
  text: { format: NonNullable<NonNullable<ResponsesRequest['text']>['format']>; verbosity?: string };
  tool_choice: NonNullable<ResponsesRequest['tool_choice']>;
  tools: NonNullable<ResponsesRequest['tools']>;
  top_p: number | null;
  truncation: 'auto' | 'disabled';
  usage?: ResponseUsage;
  /** Given when the request set it (the document's `user` is a string, never null). */
  user?: string;
  /** The request's tier until the provider says which it served. */
  service_tier: string | null;
  prompt_cache_key: string | null;
  prompt_cache_retention: string | null;
  safety_identifier: string | null;
  top_logprobs: number;
  max_tool_calls: number | null;
  /** Whether the response runs in the background (false for a foreground one, as OpenAI shows it). */
  background: boolean;
  metadata: Record<string, string>;
}

/** One server-sent event of a streamed response, before its `sequence_number` is given. */
export type ResponseEvent = { type: string } & Record<string, unknown>;
