import type { ContentBlock } from '../../core/openai-types.js';
import type { AssistantMessage } from '../../core/schemas/index.js';

/**
 * The reasoning an assistant message of the history carries back, so a provider keeps its chain of thought
 * across turns: its `content_blocks` (as the gateway returned them when not strict; the chat schema lets the
 * key through without describing it), then its `thinking` / `redacted_thinking` content parts (the schema's
 * own way to send them back), in their order. This is the one place that reads either.
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
