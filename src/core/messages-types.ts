/**
 * Anthropic's Messages wire shapes of the answers the gateway gives on /v1/messages: the Message object,
 * the stream's events and the error object, as Anthropic documents them. Field names are Anthropic's.
 */

export type MessagesStopReason =
  'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal' | null;

export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  /** The cache writes by how long they are kept. */
  cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number } | null;
}

export type MessagesAnswerBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown };

export interface MessagesAnswer {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: MessagesAnswerBlock[];
  stop_reason: MessagesStopReason;
  stop_sequence: string | null;
  usage: MessagesUsage;
}

export type MessagesBlockDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'input_json_delta'; partial_json: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string };

/** One event of a Messages stream; its `type` is also the SSE `event:` name. */
export type MessagesStreamEvent =
  | { type: 'message_start'; message: MessagesAnswer }
  | { type: 'content_block_start'; index: number; content_block: MessagesAnswerBlock }
  | { type: 'content_block_delta'; index: number; delta: MessagesBlockDelta }
  | { type: 'content_block_stop'; index: number }
  | {
      type: 'message_delta';
      delta: { stop_reason: MessagesStopReason; stop_sequence: string | null };
      usage: Partial<MessagesUsage> & { output_tokens: number };
    }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | { type: 'error'; error: { type: string; message: string } };

export interface MessagesErrorBody {
  type: 'error';
  error: { type: string; message: string };
}

/** Whether a chunk of the pipeline is an Anthropic stream event (rather than an OpenAI chunk). */
export function isMessagesStreamEvent(chunk: object): chunk is MessagesStreamEvent {
  const type = (chunk as { type?: unknown }).type;
  // A native Responses stream's events (`response.…`) have a `type` too: they are not Anthropic's.
  return !('object' in chunk) && typeof type === 'string' && !type.startsWith('response.');
}
