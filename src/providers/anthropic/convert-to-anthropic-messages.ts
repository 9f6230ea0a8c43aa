import { GatewayError } from '../../core/errors.js';
import type {
  AssistantMessage,
  ChatMessage,
  ToolMessage,
  UserContentPart,
  UserMessage,
} from '../../core/schemas/index.js';
import { toAlternatingTurns } from '../shared/alternating-turns.js';
import { markedAt } from '../shared/cache-mark-origins.js';
import { parseDataUrl } from '../shared/data-url.js';
import { returnedContentBlocks } from '../shared/returned-content-blocks.js';
import { parseToolArguments } from '../shared/tool-arguments.js';
import type {
  AnthropicCacheControl,
  AnthropicContentBlock,
  AnthropicMessage,
} from './anthropic-api-types.js';

export interface AnthropicPrompt {
  system: AnthropicContentBlock[];
  messages: AnthropicMessage[];
}

const IMAGE_MEDIA_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/**
 * OpenAI messages → Anthropic `system` + alternating user/assistant turns. System and developer messages
 * go to `system` wherever they appear (Anthropic has no mid-conversation system turn). Tool results become
 * `tool_result` blocks of a user turn; consecutive turns of one role are merged, as Anthropic demands
 * alternation. Assistant `content_blocks` (thinking with its signature, redacted thinking) are sent back
 * before the text so that multi-turn extended thinking keeps working. A `cache_control` on a content part
 * goes on its block; one on a whole message (LiteLLM's and Portkey's extension) on the message's last block,
 * a tool message's result.
 */
export function convertToAnthropicMessages(messages: ChatMessage[]): AnthropicPrompt {
  const { system, turns } = toAlternatingTurns<AnthropicContentBlock>(messages, {
    provider: 'anthropic',
    system: (message, where) => userContent(message.content, where).filter(isText),
    user: (message, where) => userContent(message.content, where),
    assistant: assistantContent,
    toolResult,
    marked: withMessageCacheControl,
  });
  return { system, messages: turns };
}

function withMessageCacheControl(
  message: ChatMessage,
  blocks: AnthropicContentBlock[],
  where: string,
): AnthropicContentBlock[] {
  const cacheControl = (message as { cache_control?: AnthropicCacheControl }).cache_control;
  const last = blocks[blocks.length - 1];
  // Thinking blocks cannot be cached directly (Anthropic refuses a cache_control on one).
  if (
    !cacheControl ||
    last.type === 'thinking' ||
    last.type === 'redacted_thinking' ||
    'cache_control' in last
  ) {
    return blocks;
  }
  const block = markedAt(
    { ...last, cache_control: cacheControl } as AnthropicContentBlock,
    `${where}.cache_control`,
  );
  return [...blocks.slice(0, -1), block];
}

function isText(block: AnthropicContentBlock): boolean {
  return block.type === 'text';
}

function userContent(content: UserMessage['content'], where: string): AnthropicContentBlock[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return content.map((part, j) => contentPart(part, `${where}.content[${j}]`));
}

/** The block with its part's `cache_control` (`where` the part's field). */
function withCacheControl<T extends AnthropicContentBlock>(
  block: T,
  part: UserContentPart,
  where: string,
): T {
  const cacheControl = (part as { cache_control?: Record<string, unknown> }).cache_control;
  return cacheControl ? markedAt({ ...block, cache_control: cacheControl }, `${where}.cache_control`) : block;
}

function contentPart(part: UserContentPart, where: string): AnthropicContentBlock {
  if (part.type === 'text') {
    return withCacheControl({ type: 'text', text: String(part.text ?? '') }, part, where);
  }
  if (part.type === 'image_url') {
    const url = part.image_url?.url ?? '';
    return withCacheControl(imageBlock(url, `${where}.image_url`), part, where);
  }
  if (part.type === 'file') {
    const file = part.file ?? {};
    // A file by URL is Anthropic's to fetch (a PDF), as an image by URL is: the gateway never fetches one.
    if (file.file_url !== undefined) {
      if (/^https?:\/\//i.test(file.file_url)) {
        return withCacheControl(
          { type: 'document', source: { type: 'url', url: file.file_url } },
          part,
          where,
        );
      }
      throw new GatewayError(
        'unsupported_parameter',
        `${where}.file.file_url: anthropic fetches a file_url only over http(s)`,
        { param: `${where}.file.file_url` },
      );
    }
    const data = file.file_data ? parseDataUrl(file.file_data) : undefined;
    if (data?.mediaType === 'application/pdf') {
      return withCacheControl(
        { type: 'document', source: { type: 'base64', media_type: data.mediaType, data: data.base64 } },
        part,
        where,
      );
    }
    throw new GatewayError(
      'unsupported_parameter',
      `${where}.file: anthropic accepts only PDF documents given inline as a data URL in file_data`,
      { param: `${where}.file` },
    );
  }
  throw new GatewayError(
    'unsupported_parameter',
    `${where}: content part type '${part.type}' is not supported by anthropic`,
    {
      param: where,
    },
  );
}

function imageBlock(url: string, param: string): AnthropicContentBlock {
  const data = parseDataUrl(url);
  if (data) {
    if (!IMAGE_MEDIA_TYPES.has(data.mediaType)) {
      throw new GatewayError(
        'unsupported_parameter',
        `${param}: image type ${data.mediaType} is not supported by anthropic (jpeg, png, gif, webp)`,
        { param },
      );
    }
    return { type: 'image', source: { type: 'base64', media_type: data.mediaType, data: data.base64 } };
  }
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  throw new GatewayError('invalid_body', `${param}: expected an http(s) URL or a base64 data URL`, { param });
}

function assistantContent(message: AssistantMessage, where: string): AnthropicContentBlock[] {
  const blocks: AnthropicContentBlock[] = [];
  for (const block of returnedContentBlocks(message)) {
    if (block.type === 'thinking' && typeof block.thinking === 'string') {
      blocks.push({ type: 'thinking', thinking: block.thinking, signature: block.signature ?? '' });
    } else if (block.type === 'redacted_thinking' && typeof block.data === 'string') {
      blocks.push({ type: 'redacted_thinking', data: block.data });
    }
  }
  if (typeof message.content === 'string') {
    if (message.content !== '') blocks.push({ type: 'text', text: message.content });
  } else if (Array.isArray(message.content)) {
    message.content.forEach((part, j) => {
      if (part.type === 'text') blocks.push(contentPart(part, `${where}.content[${j}]`));
      // refusal parts of earlier answers carry nothing the model needs back
    });
  }
  (message.tool_calls ?? []).forEach((call, k) => {
    blocks.push({
      type: 'tool_use',
      id: call.id,
      name: call.function.name,
      input: parseToolArguments(call.function.arguments, `${where}.tool_calls[${k}].function.arguments`),
    });
  });
  return blocks;
}

function toolResult(message: ToolMessage, toolCallId: string, where: string): AnthropicContentBlock {
  const content =
    typeof message.content === 'string' || message.content === undefined || message.content === null
      ? (message.content ?? '')
      : userContent(message.content, where);
  return { type: 'tool_result', tool_use_id: toolCallId, content };
}
