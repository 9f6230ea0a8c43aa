/**
 * An estimate of a Messages request's input tokens, for `count_tokens` on a provider that has no count of
 * its own: the request's text (system, every text block, tool results, tool inputs, thinking, documents'
 * text, and the tool definitions as JSON) counted with the o200k_base encoding (`gpt-tokenizer`), plus a
 * fixed allowance per image and per PDF page and a few tokens per message for its framing. Providers
 * tokenise differently; this is an estimate within some percent, not the provider's count. The encoding's
 * tables (some megabytes) are loaded on the first estimate, not at start.
 */
import type { MessagesContentBlock, MessagesCountTokensRequest } from '../../core/schemas/index.js';

/** Anthropic's figure for a ~1.15 megapixel image, the largest it takes without resizing. */
export const IMAGE_TOKENS = 1600;
/** Anthropic's figure for a PDF page: 1,500 to 3,000 tokens of text (the higher taken), and the page as an
 * image. */
export const DOCUMENT_PAGE_TOKENS = 3000 + IMAGE_TOKENS;
/** The role and turn markers of one message. */
const MESSAGE_FRAMING_TOKENS = 4;
/**
 * The encoding splits text into words and encodes each in a time that grows with the square of its
 * length: a long run without a break (a line of one character, an inlined blob) took tens of seconds, the
 * process doing nothing else meanwhile. Text is counted in slices of this many characters instead, which
 * changes the count by at most a token per slice.
 */
const SLICE_CHARS = 4000;

type Json = Record<string, unknown>;

/** What a block adds: text to count, and tokens allowed for what is not text (images, PDF pages). */
interface BlockTokens {
  text: string;
  fixed: number;
}

function blocksTokens(blocks: MessagesContentBlock[]): BlockTokens {
  const parts = blocks.map(blockTokens);
  return {
    text: parts
      .map((part) => part.text)
      .filter((text) => text !== '')
      .join('\n'),
    fixed: parts.reduce((sum, part) => sum + part.fixed, 0),
  };
}

/** A string or blocks, as a tool result's or a document's content is. */
function contentTokens(content: unknown): BlockTokens {
  if (typeof content === 'string') return { text: content, fixed: 0 };
  if (!Array.isArray(content)) return { text: '', fixed: 0 };
  return blocksTokens(content as MessagesContentBlock[]);
}

/** A PDF's pages: its page objects (`/Type /Page`, not `/Pages`). At least one, as they may also sit in
 * compressed object streams. The base64 is never counted as text: it is not what the model reads, and
 * tokenising megabytes of it takes the process tens of seconds. */
export function pdfPages(base64: string): number {
  const pages = Buffer.from(base64, 'base64')
    .toString('latin1')
    .match(/\/Type\s*\/Page(?![A-Za-z])/g);
  return Math.max(1, pages?.length ?? 0);
}

function documentTokens(block: MessagesContentBlock): BlockTokens {
  const source = block.source as Json;
  const described = [block.title, block.context].filter((text) => typeof text === 'string').join('\n');
  let own: BlockTokens;
  if (source.type === 'text') own = contentTokens(source.data);
  else if (source.type === 'content') own = contentTokens(source.content);
  else if (source.type === 'base64' && typeof source.data === 'string') {
    own = { text: '', fixed: pdfPages(source.data) * DOCUMENT_PAGE_TOKENS };
  } else {
    // A URL or an uploaded file: its length is unknown here, counted as one page.
    own = { text: '', fixed: DOCUMENT_PAGE_TOKENS };
  }
  return { text: described ? `${described}\n${own.text}` : own.text, fixed: own.fixed };
}

function blockTokens(block: MessagesContentBlock): BlockTokens {
  switch (block.type) {
    case 'text':
      return { text: String(block.text), fixed: 0 };
    case 'thinking':
      return { text: String(block.thinking), fixed: 0 };
    case 'tool_use':
      return { text: `${String(block.name)} ${JSON.stringify(block.input ?? {})}`, fixed: 0 };
    case 'image':
      return { text: '', fixed: IMAGE_TOKENS };
    case 'document':
      return documentTokens(block);
    case 'tool_result':
      return contentTokens(block.content);
    default:
      return { text: JSON.stringify(block), fixed: 0 };
  }
}

function countInSlices(text: string, countTokens: (text: string) => number): number {
  let count = 0;
  for (let start = 0; start < text.length;) {
    let end = Math.min(start + SLICE_CHARS, text.length);
    // A surrogate pair stays whole.
    if (end < text.length && /[\uD800-\uDBFF]/.test(text[end - 1] as string)) end += 1;
    count += countTokens(text.slice(start, end));
    start = end;
  }
  return count;
}

export async function estimateInputTokens(request: MessagesCountTokensRequest): Promise<number> {
  const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
  const texts: string[] = [];
  let fixed = 0;
  if (typeof request.system === 'string') texts.push(request.system);
  else for (const block of request.system ?? []) texts.push(blockTokens(block).text);
  for (const message of request.messages) {
    const part = contentTokens(message.content);
    texts.push(part.text);
    fixed += part.fixed;
  }
  if (request.tools) texts.push(JSON.stringify(request.tools));
  return (
    countInSlices(texts.join('\n'), countTokens) + fixed + request.messages.length * MESSAGE_FRAMING_TOKENS
  );
}
