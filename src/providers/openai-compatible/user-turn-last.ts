/**
 * Mistral serves a conversation only when its last message is the user's or a tool result ("Expected last
 * role User or Tool (or Assistant with prefix True) for serving but got assistant", code 3230), where OpenAI
 * answers one that ends with the assistant or holds only a system prompt. Such a conversation is sent with a
 * minimal user turn after it, as Bedrock and Gemini get one for how theirs must open; an assistant message the
 * client marked `prefix: true` (Mistral's prefill) stays last.
 */
import { CONVERSATION_START_TEXT } from '../shared/conversation-start.js';

const SERVED_LAST = new Set(['user', 'tool', 'function']);

/** The messages with a user turn after them when they end otherwise; the same array when they need none. */
export function withUserTurnLast(messages: unknown): unknown {
  if (!Array.isArray(messages) || messages.length === 0) return messages;
  const last = messages[messages.length - 1] as { role?: unknown; prefix?: unknown } | null;
  if (typeof last?.role !== 'string' || SERVED_LAST.has(last.role)) return messages;
  // Mistral's own prefill: an assistant message the client marked `prefix: true` is the answer's beginning.
  if (last.role === 'assistant' && last.prefix === true) return messages;
  return [...messages, { role: 'user', content: CONVERSATION_START_TEXT }];
}
