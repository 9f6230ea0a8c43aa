import type { ContentBlock } from '../../core/openai-types.js';
import type { AssistantMessage } from '../../core/schemas/index.js';

/**
 * The reasoning an assistant message of the history carries back (`content_blocks`, as the gateway returned
 * them when not strict), so a provider keeps its chain of thought across turns. The chat schema lets the key
 * through without describing it; this is the one place that reads it, in the shape the gateway gave it.
 */
export function returnedContentBlocks(message: AssistantMessage): readonly ContentBlock[] {
  return (message as { content_blocks?: ContentBlock[] }).content_blocks ?? [];
}
