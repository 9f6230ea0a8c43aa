/**
 * An estimate of a Messages request's input tokens, for `count_tokens` on a provider that has no count of
 * its own: the request's text (system, every text block, tool results, tool inputs, thinking, and the tool
 * definitions as JSON) counted with the o200k_base encoding (`gpt-tokenizer`), plus a fixed allowance per
 * image and a few tokens per message for its framing. Providers tokenise differently; this is an estimate
 * within some percent, not the provider's count. The encoding's tables (some megabytes) are loaded on the
 * first estimate, not at start.
 */
import type { MessagesContentBlock, MessagesCountTokensRequest } from '../../core/schemas/index.js';

/** Anthropic's figure for a ~1.15 megapixel image, the largest it takes without resizing. */
export const IMAGE_TOKENS = 1600;
/** The role and turn markers of one message. */
const MESSAGE_FRAMING_TOKENS = 4;

function blockText(block: MessagesContentBlock): { text: string; images: number } {
  switch (block.type) {
    case 'text':
      return { text: String(block.text), images: 0 };
    case 'thinking':
      return { text: String(block.thinking), images: 0 };
    case 'tool_use':
      return { text: `${String(block.name)} ${JSON.stringify(block.input ?? {})}`, images: 0 };
    case 'image':
      return { text: '', images: 1 };
    case 'tool_result': {
      const content = block.content;
      if (typeof content === 'string') return { text: content, images: 0 };
      if (!Array.isArray(content)) return { text: '', images: 0 };
      const parts = (content as MessagesContentBlock[]).map(blockText);
      return {
        text: parts.map((part) => part.text).join('\n'),
        images: parts.reduce((sum, part) => sum + part.images, 0),
      };
    }
    default:
      return { text: JSON.stringify(block), images: 0 };
  }
}

export async function estimateInputTokens(request: MessagesCountTokensRequest): Promise<number> {
  const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
  const texts: string[] = [];
  let images = 0;
  if (typeof request.system === 'string') texts.push(request.system);
  else for (const block of request.system ?? []) texts.push(blockText(block).text);
  for (const message of request.messages) {
    if (typeof message.content === 'string') {
      texts.push(message.content);
      continue;
    }
    for (const block of message.content) {
      const part = blockText(block);
      texts.push(part.text);
      images += part.images;
    }
  }
  if (request.tools) texts.push(JSON.stringify(request.tools));
  return (
    countTokens(texts.join('\n')) + images * IMAGE_TOKENS + request.messages.length * MESSAGE_FRAMING_TOKENS
  );
}
