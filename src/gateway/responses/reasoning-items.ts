/**
 * Whose reasoning a `reasoning` item holds, read from its shape, so that each provider is sent back only
 * the reasoning it can read:
 * - a **thinking provider's** (Anthropic, Bedrock, Gemini … reached through chat): the item has `content`
 *   (`reasoning_text` parts, the thinking) and its `encrypted_content` is the thinking's signature; an
 *   empty `content` with `encrypted_content` is Anthropic's redacted thinking, its `data` there;
 * - a **Responses provider's** (OpenAI, Azure OpenAI, answering natively): no `content`, the reasoning
 *   encrypted by the provider in `encrypted_content`, a summary at most in `summary`.
 * The translation (to-chat-request.ts) carries the first kind back as thinking and drops the second; the
 * native call (steps/responses-step.ts) carries the second and drops the first.
 */
import type { ReasoningItem } from '../../core/schemas/responses-request.js';

/** A `reasoning` item (the other kinds pass a type check on `type` alone: `{ type: string }`). */
export function isReasoningItem(item: { type?: string }): item is ReasoningItem {
  return item.type === 'reasoning';
}

export function isThinkingReasoning(item: Pick<ReasoningItem, 'content'>): boolean {
  return Array.isArray(item.content);
}

/** Anthropic's redacted thinking: no text, the encrypted thinking in `encrypted_content`. */
export function isRedactedThinking(item: Pick<ReasoningItem, 'content' | 'encrypted_content'>): boolean {
  return Array.isArray(item.content) && item.content.length === 0 && item.encrypted_content != null;
}
