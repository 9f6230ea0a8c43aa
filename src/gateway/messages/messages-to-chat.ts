/**
 * An Anthropic Messages request as a chat completion request, for a provider without the API natively.
 * Kept: system (string or text blocks), text and images, documents (a PDF as a file part, text as text),
 * tool definitions and tool_choice, tool_use and tool_result turns (a result's images in the user message
 * after it), thinking and redacted_thinking blocks of earlier turns (as the chat pipeline's
 * `content_blocks`, which providers with thinking carry back), sampling and stop settings, metadata.user_id,
 * structured outputs (a JSON schema as `response_format`).
 * `cache_control` (a prompt-caching breakpoint) is kept, for a provider that acts on it, where the chat
 * request can carry it as LiteLLM and Portkey do: on the content part a block became (a system block's too),
 * on a tool, and on the message for a tool result, a tool use or an assistant's text (the message's end
 * is the nearest point a chat message can mark); else it is dropped. A request-level `cache_control`
 * (Anthropic's automatic caching) is a breakpoint on the last cacheable block, the last block that is
 * neither thinking nor an empty text, as Anthropic places it, while the client's own leave it one of the 4
 * (providers/anthropic/automatic-cache-breakpoint.ts).
 * Dropped: `top_k`. Refused (400 naming the field): blocks and tools that have no chat equivalent
 * (documents by URL or file id, server tools and their results, MCP servers), a tool_choice of a tool not
 * among the tools.
 */
import { GatewayError } from '../../core/errors.js';
import type { ContentBlock } from '../../core/openai-types.js';
import { withAutomaticCacheBreakpoint } from '../../providers/anthropic/index.js';
import type {
  ChatCompletionRequest,
  ChatMessage,
  MessagesContentBlock,
  MessagesMessage,
  MessagesRequest,
  UserContentPart,
} from '../../core/schemas/index.js';

type Json = Record<string, unknown>;

/** Whether the translation keeps the request's prompt-caching breakpoints (`cache_control`). */
export interface TranslationOptions {
  cacheControl?: boolean;
  /** The most stop strings the target takes (its adapter's `stopSequences`); absent: no bound is known. */
  stopSequences?: number;
}

/** A block's `cache_control`, as the chat extension's field, when the translation keeps it. */
function cacheMark(block: { cache_control?: unknown }, options: TranslationOptions): Json {
  return options.cacheControl && block.cache_control ? { cache_control: block.cache_control } : {};
}

/** The part with the block's `cache_control` (`parts` the block's parts: the last one is marked). */
function marked(parts: UserContentPart[], block: MessagesContentBlock, options: TranslationOptions) {
  const mark = cacheMark(block, options);
  if (parts.length === 0 || !('cache_control' in mark)) return parts;
  return [...parts.slice(0, -1), { ...parts[parts.length - 1], ...mark } as UserContentPart];
}

function refused(param: string, what: string): GatewayError {
  return new GatewayError(
    'unsupported_parameter',
    `${param}: ${what} cannot be translated for this provider (only Anthropic, and Claude on Bedrock or Vertex AI, take it natively)`,
    { param },
  );
}

/** A block's source, of a type the chat API can carry (by the fields it needs), with those fields. */
function sourceOf(
  block: MessagesContentBlock,
  param: string,
  kind: 'image' | 'document',
  fieldsByType: Readonly<Record<string, readonly string[]>>,
): Record<string, string> & { type: string } {
  const source = block.source as Json;
  const type = String(source.type);
  const fields = Object.hasOwn(fieldsByType, type) ? fieldsByType[type] : undefined;
  if (fields === undefined) throw refused(`${param}.source.type`, `${article(kind)} source of type ${type}`);
  const field = fields.find((name) => typeof source[name] !== 'string');
  if (field !== undefined) {
    const missing = `${param}.source.${field}`;
    throw new GatewayError(
      'invalid_body',
      `${missing} is required for ${article(kind)} source of type ${type}`,
      {
        param: missing,
      },
    );
  }
  return source as Record<string, string> & { type: string };
}

const article = (kind: 'image' | 'document'): string => (kind === 'image' ? 'an image' : 'a document');

const IMAGE_SOURCES = { base64: ['media_type', 'data'], url: ['url'] } as const;

function imagePart(block: MessagesContentBlock, param: string): UserContentPart {
  const source = sourceOf(block, param, 'image', IMAGE_SOURCES);
  const url = source.type === 'base64' ? `data:${source.media_type};base64,${source.data}` : source.url;
  return { type: 'image_url', image_url: { url } } as UserContentPart;
}

/**
 * A tool_result's content: its text (a string, or its text blocks joined), which a chat tool message
 * carries, and its images, which no tool message does (chat tool messages are text only): those go in the
 * user message that follows the tool messages, each with where it was (`content[k]`).
 */
function toolResultContent(
  block: MessagesContentBlock,
  param: string,
): { text: string; images: Array<{ part: UserContentPart; at: string }> } {
  const content = block.content;
  if (content === undefined) return { text: '', images: [] };
  if (typeof content === 'string') return { text: content, images: [] };
  if (!Array.isArray(content)) throw refused(`${param}.content`, 'this content');
  const texts: string[] = [];
  const images: Array<{ part: UserContentPart; at: string }> = [];
  (content as MessagesContentBlock[]).forEach((part, k) => {
    const at = `content[${k}]`;
    if (part.type === 'text' && typeof part.text === 'string') texts.push(part.text);
    else if (part.type === 'image') images.push({ part: imagePart(part, `${param}.${at}`), at });
    else throw refused(`${param}.${at}.type`, `a ${String(part.type)} block in a tool result`);
  });
  return { text: texts.join('\n'), images };
}

/** A document's sources the chat API can carry: inline data (a PDF), plain text, content blocks. A URL or a
 * Files API id names a file only Anthropic can fetch. */
const DOCUMENT_SOURCES = { base64: ['media_type', 'data'], text: ['data'], content: [] } as const;

/**
 * A document as chat content parts: inline data (a PDF) as a file part, which OpenAI, Gemini, Bedrock and
 * Claude read; plain text as its text; content blocks as their text and images. Its title names the file;
 * `context` and `citations` have no chat equivalent (chat answers cite nothing).
 */
function documentParts(block: MessagesContentBlock, param: string): UserContentPart[] {
  const source = sourceOf(block, param, 'document', DOCUMENT_SOURCES);
  if (source.type === 'text') return [{ type: 'text', text: source.data }];
  if (source.type === 'base64') {
    const pdf = source.media_type === 'application/pdf';
    const filename = typeof block.title === 'string' ? block.title : pdf ? 'document.pdf' : 'document';
    const file_data = `data:${source.media_type};base64,${source.data}`;
    return [{ type: 'file', file: { filename, file_data } }];
  }
  const content = (block.source as Json).content;
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw refused(`${param}.source.content`, 'this content');
  return (content as MessagesContentBlock[]).map((part, k) => {
    const where = `${param}.source.content[${k}]`;
    if (part.type === 'text') return { type: 'text', text: part.text as string };
    if (part.type === 'image') return imagePart(part, where);
    throw refused(`${where}.type`, `a ${part.type} block in a document`);
  });
}

/**
 * Where a chat message came from in the Messages request, so that a refusal of the chat request (an
 * adapter's, naming `messages[k].content[m]…`) can name the client's field: the system prompt, or message
 * `message`, and in it the tool_result block a tool message was made of, or the block each part of a user
 * message's content came from, as a path in the message (`content[j]`; a tool result's image
 * `content[j].content[k]`; each part of a document its block's).
 */
export type ChatOrigin = { system: true } | { message: number; block?: number; parts?: readonly string[] };

/** A user turn: its tool results become tool messages (first, as chat wants them right after the call),
 * the rest one user message, led by the tool results' images. */
function userTurn(
  message: MessagesMessage,
  i: number,
  origins: ChatOrigin[],
  options: TranslationOptions,
): ChatMessage[] {
  if (typeof message.content === 'string') {
    origins.push({ message: i });
    return [{ role: 'user', content: message.content }];
  }
  const tools: ChatMessage[] = [];
  const toolBlocks: number[] = [];
  const toolImages: UserContentPart[] = [];
  const toolImagePaths: string[] = [];
  const parts: UserContentPart[] = [];
  const partPaths: string[] = [];
  (message.content as MessagesContentBlock[]).forEach((block, j) => {
    const param = `messages[${i}].content[${j}]`;
    switch (block.type) {
      case 'text':
        parts.push(...marked([{ type: 'text', text: block.text as string }], block, options));
        partPaths.push(`content[${j}]`);
        break;
      case 'image':
        parts.push(...marked([imagePart(block, param)], block, options));
        partPaths.push(`content[${j}]`);
        break;
      case 'document':
        for (const part of marked(documentParts(block, param), block, options)) {
          parts.push(part);
          partPaths.push(`content[${j}]`);
        }
        break;
      case 'tool_result': {
        const { text, images } = toolResultContent(block, param);
        toolBlocks.push(j);
        tools.push({
          role: 'tool',
          tool_call_id: block.tool_use_id as string,
          content: block.is_error === true ? `Error: ${text}` : text,
          ...cacheMark(block, options),
        } as ChatMessage);
        for (const { part, at } of images) {
          toolImages.push(part);
          toolImagePaths.push(`content[${j}].${at}`);
        }
        break;
      }
      default:
        throw refused(`${param}.type`, `a ${block.type} block`);
    }
  });
  origins.push(...toolBlocks.map((block) => ({ message: i, block })));
  parts.unshift(...toolImages);
  partPaths.unshift(...toolImagePaths);
  if (parts.length === 0) return tools;
  const onlyText = parts.every((part) => part.type === 'text' && !('cache_control' in part));
  const content = onlyText ? parts.map((part) => (part as { text: string }).text).join('\n') : parts;
  origins.push(onlyText ? { message: i } : { message: i, parts: partPaths });
  return [...tools, { role: 'user', content }];
}

function assistantTurn(message: MessagesMessage, i: number, options: TranslationOptions): ChatMessage {
  if (typeof message.content === 'string') return { role: 'assistant', content: message.content };
  const mark = (message.content as MessagesContentBlock[]).reduce<Json>(
    (found, block) => ({ ...found, ...cacheMark(block, options) }),
    {},
  );
  const text: string[] = [];
  const toolCalls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> =
    [];
  const blocks: ContentBlock[] = [];
  (message.content as MessagesContentBlock[]).forEach((block, j) => {
    switch (block.type) {
      case 'text':
        text.push(block.text as string);
        break;
      case 'tool_use':
        toolCalls.push({
          id: block.id as string,
          type: 'function',
          function: { name: block.name as string, arguments: JSON.stringify(block.input ?? {}) },
        });
        break;
      case 'thinking':
        blocks.push({
          type: 'thinking',
          thinking: block.thinking as string,
          signature: block.signature as string,
        });
        break;
      case 'redacted_thinking':
        blocks.push({ type: 'redacted_thinking', data: block.data as string });
        break;
      default:
        throw refused(`messages[${i}].content[${j}].type`, `a ${block.type} block`);
    }
  });
  const out: Json = { role: 'assistant', content: text.length > 0 ? text.join('') : null };
  if (toolCalls.length > 0) out.tool_calls = toolCalls;
  if (blocks.length > 0) out.content_blocks = blocks;
  Object.assign(out, mark);
  return out as ChatMessage;
}

function systemContent(
  system: MessagesRequest['system'],
  options: TranslationOptions,
): string | UserContentPart[] | undefined {
  if (system === undefined) return undefined;
  if (typeof system === 'string') return system;
  const blocks = system as MessagesContentBlock[];
  // A breakpoint in it needs the blocks kept apart, each a text part.
  if (blocks.some((block) => 'cache_control' in cacheMark(block, options))) {
    return blocks.flatMap((block) => marked([{ type: 'text', text: block.text as string }], block, options));
  }
  return blocks.map((block) => block.text as string).join('\n');
}

function tools(request: MessagesRequest, options: TranslationOptions): Json {
  // Anthropic takes an empty list as no tools; OpenAI refuses one, and a tool_choice without tools.
  if (!request.tools?.length) {
    const type = request.tool_choice?.type;
    // Anthropic refuses a choice that must call a tool when there is none.
    if (type === 'any' || type === 'tool') {
      throw new GatewayError('invalid_body', `tool_choice of type ${type} needs tools`, {
        param: 'tool_choice',
      });
    }
    return {};
  }
  const out: Json = {
    tools: request.tools.map((tool, i) => {
      if (tool.type !== undefined && tool.type !== 'custom') {
        throw refused(`tools[${i}].type`, `the server tool ${tool.type}`);
      }
      return {
        type: 'function',
        ...cacheMark(tool, options),
        function: {
          name: tool.name,
          ...(tool.description !== undefined ? { description: tool.description } : {}),
          parameters: tool.input_schema ?? { type: 'object', properties: {} },
          // Anthropic's strict tool use is OpenAI's strict function calling; the tool's other fields
          // (defer_loading, input_examples, eager_input_streaming…) have no chat equivalent.
          ...(tool.strict !== undefined ? { strict: tool.strict } : {}),
        },
      };
    }),
  };
  const choice = request.tool_choice;
  // Anthropic refuses a choice of a tool it was not given; the chat request would force a function the
  // model was never offered, which a provider may call all the same, or ignore.
  if (choice?.type === 'tool' && !request.tools.some((tool) => tool.name === choice.name)) {
    throw new GatewayError(
      'invalid_body',
      `tool_choice.name ${choice.name} is not the name of a tool of tools`,
      {
        param: 'tool_choice.name',
      },
    );
  }
  if (choice) {
    out.tool_choice =
      choice.type === 'any'
        ? 'required'
        : choice.type === 'tool'
          ? { type: 'function', function: { name: choice.name } }
          : choice.type;
    if (choice.disable_parallel_tool_use === true) out.parallel_tool_calls = false;
  }
  return out;
}

/** Structured outputs as a JSON-schema response format (the chat API's needs a name; Anthropic's has none). */
function responseFormat(request: MessagesRequest): Json {
  const [param, format] = request.output_config?.format
    ? ['output_config.format', request.output_config.format]
    : ['output_format', request.output_format];
  if (!format) return {};
  if (format.type !== 'json_schema')
    throw refused(`${param}.type`, `an output format of type ${format.type}`);
  return { response_format: { type: 'json_schema', json_schema: { name: 'output', schema: format.schema } } };
}

export function messagesToChat(
  request: MessagesRequest,
  options: TranslationOptions = {},
): ChatCompletionRequest {
  return translateMessages(request, options).body;
}

/** The chat request, and where each of its messages came from (`origins[k]` for `messages[k]`). */
export function translateMessages(
  request: MessagesRequest,
  options: TranslationOptions = {},
): {
  body: ChatCompletionRequest;
  origins: ChatOrigin[];
} {
  if (options.cacheControl) request = withAutomaticCacheBreakpoint(request);
  // Anthropic sets no such small bound; OpenAI's chat `stop` takes 4, Gemini's 5: the target's own is kept.
  const stops = options.stopSequences;
  if (stops !== undefined && (request.stop_sequences?.length ?? 0) > stops) {
    throw new GatewayError(
      'invalid_body',
      `stop_sequences: this provider takes at most ${stops} stop sequences, ${request.stop_sequences!.length} were given`,
      { param: 'stop_sequences' },
    );
  }
  // The MCP connector's tools are Anthropic's to call, as a server tool's are: without them the model would
  // answer as if it had none.
  const mcpServers = (request as { mcp_servers?: unknown }).mcp_servers;
  if (Array.isArray(mcpServers) && mcpServers.length > 0) throw refused('mcp_servers', 'an MCP server');
  const messages: ChatMessage[] = [];
  const origins: ChatOrigin[] = [];
  const system = systemContent(request.system, options);
  if (system !== undefined) {
    messages.push({ role: 'system', content: system } as ChatMessage);
    origins.push({ system: true });
  }
  request.messages.forEach((message, i) => {
    if (message.role === 'user') messages.push(...userTurn(message, i, origins, options));
    else {
      messages.push(assistantTurn(message, i, options));
      origins.push({ message: i });
    }
  });
  const thinking = request.thinking;
  const body: Json = {
    model: request.model,
    messages,
    // OpenAI's reasoning models refuse the deprecated max_tokens; every adapter reads this one, and
    // OpenAI-wire providers that know only max_tokens get it under that name (openai-body.ts).
    max_completion_tokens: request.max_tokens,
    ...tools(request, options),
    ...responseFormat(request),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.top_p !== undefined ? { top_p: request.top_p } : {}),
    ...(request.stop_sequences?.length ? { stop: request.stop_sequences } : {}),
    ...(request.metadata?.user_id ? { user: request.metadata.user_id } : {}),
    ...(thinking?.type === 'enabled'
      ? { thinking: { type: 'enabled', budget_tokens: thinking.budget_tokens } }
      : {}),
    ...(request.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  };
  return { body: body as ChatCompletionRequest, origins };
}

/**
 * The Messages request's field a chat request's field `param` was made from (an image part's `image_url`,
 * a document's file part's `file`, is its block's `source`); undefined for a field that is not in a message.
 */
export function messagesParam(param: string, origins: readonly ChatOrigin[]): string | undefined {
  const match = /^messages\[(\d+)\](.*)$/s.exec(param);
  const origin = match ? origins[Number(match[1])] : undefined;
  if (!match || !origin) return undefined;
  const rest = match[2] ?? '';
  if ('system' in origin) return 'system';
  const message = `messages[${origin.message}]`;
  if (origin.block !== undefined) return `${message}.content[${origin.block}]${rest}`;
  const part = /^\.content\[(\d+)\](.*)$/s.exec(rest);
  const path = part && origin.parts ? origin.parts[Number(part[1])] : undefined;
  if (!part || path === undefined) return `${message}${rest}`;
  const field = (part[2] ?? '').replace(/^\.(image_url|file)(\..*)?$/s, '.source');
  return `${message}.${path}${field}`;
}
