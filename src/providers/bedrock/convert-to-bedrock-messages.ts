import { GatewayError } from '../../core/errors.js';
import type {
  AssistantMessage,
  ChatMessage,
  ToolMessage,
  UserContentPart,
  UserMessage,
} from '../../core/schemas/index.js';
import { toAlternatingTurns } from '../shared/alternating-turns.js';
import { CONVERSATION_START_TEXT } from '../shared/conversation-start.js';
import { parseDataUrl } from '../shared/data-url.js';
import { returnedContentBlocks } from '../shared/returned-content-blocks.js';
import { parseToolArguments } from '../shared/tool-arguments.js';
import type { BedrockContentBlock, BedrockImageFormat, BedrockPrompt } from './bedrock-api-types.js';
import { cachePointFor } from './bedrock-cache-points.js';

const IMAGE_FORMATS: Record<string, BedrockImageFormat> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

/**
 * OpenAI messages → Converse `system` + alternating user/assistant messages. Tool results become
 * `toolResult` blocks of a user turn, and turns of one role are merged (Converse demands alternation).
 * Images must be inline bytes: an image URL would need the gateway to fetch it, which adapters do not, so
 * it is refused naming the part. A `cache_control` on a content part, or on a whole message, becomes a
 * `cachePoint` after it (after a tool message's result block for one on the message or on any of its parts,
 * as a checkpoint cannot sit inside a result; one point, not two, for a message whose last part is marked
 * too; none after a reasoning block); whether the model takes it is the caller's to judge. Converse
 * demands that the conversation start with a user turn, so one that would not (an assistant's greeting first,
 * or nothing but a system prompt) gets a minimal user turn in front.
 */
export function convertToBedrockMessages(messages: ChatMessage[]): BedrockPrompt {
  const { system, turns } = toAlternatingTurns<BedrockContentBlock>(messages, {
    provider: 'bedrock',
    system: (message, where) =>
      content(message.content, where).filter((b) => 'text' in b || 'cachePoint' in b),
    user: (message, where) => content(message.content, where),
    assistant: assistantContent,
    toolResult,
    marked: (message, blocks, where) => [...blocks, ...messageCachePoint(message, blocks, where)],
  });
  if (turns[0]?.role !== 'user')
    turns.unshift({ role: 'user', content: [{ text: CONVERSATION_START_TEXT }] });
  return { system, messages: turns };
}

/**
 * The cache point a message's own `cache_control` marks, after its last block; a tool message's parts' too
 * (their result is one block), named by the first marked part. None where that block's own mark made the
 * point already, and none after a reasoning block, which Converse refuses ("Cache point cannot be inserted
 * after reasoning block"): an assistant message of reasoning alone (its blocks come first, before any text
 * or tool call) has no place for one, as a point before it, first in the message, marks nothing. The next
 * point caches the reasoning with the rest.
 */
function messageCachePoint(
  message: ChatMessage,
  blocks: BedrockContentBlock[],
  where: string,
): BedrockContentBlock[] {
  const last = blocks[blocks.length - 1];
  if ('cachePoint' in last || 'reasoningContent' in last) return [];
  const own = (message as { cache_control?: unknown }).cache_control;
  if (own || message.role !== 'tool' || !Array.isArray(message.content)) {
    return cachePointFor(own, `${where}.cache_control`);
  }
  const parts = message.content as Array<{ cache_control?: unknown }>;
  const k = parts.findIndex((part) => part.cache_control);
  return k < 0 ? [] : cachePointFor(parts[k].cache_control, `${where}.content[${k}].cache_control`);
}

function content(value: UserMessage['content'], where: string): BedrockContentBlock[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return isBlank(value) ? [] : [{ text: value }];
  return value.flatMap((part, j) => contentPart(part, `${where}.content[${j}]`));
}

function contentPart(part: UserContentPart, where: string): BedrockContentBlock[] {
  const cachePoint = cachePointFor(
    (part as { cache_control?: unknown }).cache_control,
    `${where}.cache_control`,
  );
  if (part.type === 'text') {
    const text = String(part.text ?? '');
    return isBlank(text) ? [] : [{ text }, ...cachePoint];
  }
  if (part.type === 'image_url') {
    const param = `${where}.image_url`;
    const url = part.image_url?.url ?? '';
    const data = parseDataUrl(url);
    if (!data) {
      throw new GatewayError(
        'unsupported_parameter',
        `${param}: bedrock takes images as inline bytes only; send the image as a base64 data URL`,
        { param },
      );
    }
    const format = IMAGE_FORMATS[data.mediaType];
    if (!format) {
      throw new GatewayError(
        'unsupported_parameter',
        `${param}: image type ${data.mediaType} is not supported by bedrock`,
        {
          param,
        },
      );
    }
    return [{ image: { format, source: { bytes: data.base64 } } }, ...cachePoint];
  }
  if (part.type === 'file') {
    const file = part.file ?? {};
    if (file.file_url !== undefined) {
      throw new GatewayError(
        'unsupported_parameter',
        `${where}.file.file_url: bedrock takes no file_url (it fetches no file): send the PDF inline in file_data`,
        { param: `${where}.file.file_url` },
      );
    }
    const data = file.file_data ? parseDataUrl(file.file_data) : undefined;
    if (data?.mediaType === 'application/pdf') {
      return [
        { document: { format: 'pdf', name: documentName(file.filename), source: { bytes: data.base64 } } },
        ...cachePoint,
      ];
    }
    throw new GatewayError(
      'unsupported_parameter',
      `${where}.file: bedrock accepts PDF documents given as a data URL`,
      {
        param: `${where}.file`,
      },
    );
  }
  throw new GatewayError(
    'unsupported_parameter',
    `${where}: content part type '${part.type}' is not supported by bedrock`,
    {
      param: where,
    },
  );
}

/** Converse's longest document name. */
const DOCUMENT_NAME_MAX = 200;

/**
 * A file name as Converse takes a document's: letters, digits, hyphens, parentheses and square brackets,
 * single spaces between them (no run of whitespace), 1–200 characters. Anything else becomes a space.
 */
function documentName(filename: string | undefined): string {
  const name = (filename ?? '')
    .replace(/\.pdf$/i, '')
    .replace(/[^A-Za-z0-9 ()[\]-]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, DOCUMENT_NAME_MAX)
    .trimEnd();
  return name || 'document';
}

function assistantContent(message: AssistantMessage, where: string): BedrockContentBlock[] {
  const blocks: BedrockContentBlock[] = [];
  for (const block of returnedContentBlocks(message)) {
    if (block.type === 'thinking' && typeof block.thinking === 'string') {
      blocks.push({
        reasoningContent: {
          reasoningText: { text: block.thinking, ...(block.signature ? { signature: block.signature } : {}) },
        },
      });
    } else if (block.type === 'redacted_thinking' && typeof block.data === 'string') {
      blocks.push({ reasoningContent: { redactedContent: block.data } });
    }
  }
  if (typeof message.content === 'string') {
    if (!isBlank(message.content)) blocks.push({ text: message.content });
  } else if (Array.isArray(message.content)) {
    message.content.forEach((part, j) => {
      if (part.type === 'text') blocks.push(...contentPart(part, `${where}.content[${j}]`));
    });
  }
  (message.tool_calls ?? []).forEach((call, k) => {
    blocks.push({
      toolUse: {
        toolUseId: call.id,
        name: call.function.name,
        input: parseToolArguments(call.function.arguments, `${where}.tool_calls[${k}].function.arguments`),
      },
    });
  });
  return blocks;
}

/**
 * Converse refuses a text block of nothing but whitespace ("The text field in the ContentBlock object … is
 * blank"), which OpenAI takes (an assistant's "\n\n" before its tool calls): such text is left out, as it
 * tells the model nothing. A tool result's text may be blank and is kept.
 */
function isBlank(text: string): boolean {
  return text.trim() === '';
}

function toolResult(message: ToolMessage, toolCallId: string, where: string): BedrockContentBlock {
  const parts =
    typeof message.content === 'string' || message.content === undefined || message.content === null
      ? [{ text: message.content ?? '' }]
      : content(message.content, where).flatMap((block) => ('text' in block ? [{ text: block.text }] : []));
  return { toolResult: { toolUseId: toolCallId, content: parts } };
}
