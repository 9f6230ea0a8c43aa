import type { ContentBlock } from '../../core/openai-types.js';
import type { AssistantMessage, ChatMessage } from '../../core/schemas/index.js';

/**
 * The reasoning an assistant message of the history carries back, so a provider keeps its chain of thought
 * across turns: its `content_blocks` (as the gateway returned them when not strict; the chat schema lets the
 * key through without describing it), then its `thinking` / `redacted_thinking` content parts (the schema's
 * own way to send them back), in their order. This module is the one place that knows either.
 */
export function returnedContentBlocks(message: AssistantMessage): readonly ContentBlock[] {
  const blocks = (message as { content_blocks?: ContentBlock[] }).content_blocks ?? [];
  if (!Array.isArray(message.content)) return blocks;
  const parts: ContentBlock[] = [];
  for (const part of message.content) {
    if (part.type === 'thinking') {
      parts.push({
        type: 'thinking',
        thinking: part.thinking,
        ...(part.signature !== undefined ? { signature: part.signature } : {}),
      });
    } else if (part.type === 'redacted_thinking') {
      parts.push({ type: 'redacted_thinking', data: part.data });
    }
  }
  return parts.length === 0 ? blocks : [...blocks, ...parts];
}

type Part = { type?: unknown };

const isThinkingPart = (part: Part): boolean => part.type === 'thinking' || part.type === 'redacted_thinking';

/** Whether a message of the history carries reasoning back, in either shape. OpenAI refuses a message with
 * a field or part it does not know (400), as Mistral does (422): no OpenAI-wire provider takes it back. */
export function carriesReturnedThinking(message: ChatMessage): boolean {
  if ('content_blocks' in message) return true;
  const content: unknown = message.content;
  return Array.isArray(content) && (content as Part[]).some(isThinkingPart);
}

/** The message without the reasoning it carries back; an assistant message left with no part has empty
 * content (null beside its tool calls). */
export function withoutReturnedThinking<M extends ChatMessage>(message: M): M {
  const { content_blocks: _blocks, ...rest } = message as M & { content_blocks?: unknown };
  const content: unknown = rest.content;
  if (Array.isArray(content)) {
    const parts = (content as Part[]).filter((part) => !isThinkingPart(part));
    (rest as Record<string, unknown>).content =
      parts.length > 0 ? parts : (rest as { tool_calls?: unknown }).tool_calls ? null : '';
  }
  return rest as M;
}
