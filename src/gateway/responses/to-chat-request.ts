/**
 * A Responses request as the canonical chat request every adapter translates: the conversation's items
 * (the previous responses' and this request's) become chat messages — reasoning and function calls merged
 * into the assistant turn that carried them, function outputs as tool messages —, `instructions` the
 * system message, function tools and `text.format` their chat equivalents. Built-in tools (web search,
 * file search, computer use, code interpreter…) and OpenAI's stored prompts have no chat equivalent:
 * refused, named; the items of the tools a native provider ran on an earlier turn are left out of the
 * history.
 */
import { GatewayError } from '../../core/errors.js';
import type { ContentBlock } from '../../core/openai-types.js';
import type {
  AssistantContentPart,
  AssistantMessage,
  ChatCompletionRequest,
  ChatMessage,
  UserContentPart,
} from '../../core/schemas/index.js';
import type { ResponsesRequest } from '../../core/schemas/responses-request.js';
import { effectiveStrict } from '../../core/schemas/strict-function-schema.js';
import type { MessageOrigin } from './item-paths.js';
import { isRedactedThinking, isThinkingReasoning } from './reasoning-items.js';
import { isKnownItem, type ConversationItem, type KnownConversationItem } from './response-types.js';

type Tools = NonNullable<ChatCompletionRequest['tools']>;
type MessageItem = Extract<KnownConversationItem, { role: string }>;
type FunctionCallOutput = Extract<KnownConversationItem, { type: 'function_call_output' }>;

/** Thinking budgets for `reasoning.effort` (the gateway's `thinking` option, which Anthropic, Bedrock and
 * Gemini read). `max` asks for no more than `xhigh`: a larger budget passes the output limit of most
 * models that think in tokens. */
const THINKING_BUDGETS: Record<string, number> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 32768,
  max: 32768,
};
const MIN_THINKING_BUDGET = 1024;

/**
 * `origins`, when given, is filled with where each chat message came from, for an error that names one of
 * them (item-paths.ts). An item chat cannot carry is refused naming it: `input[k]…`, `k` its index in
 * `items`.
 */
export function toChatRequest(
  request: ResponsesRequest,
  items: readonly ConversationItem[],
  origins?: MessageOrigin[],
): ChatCompletionRequest {
  if (request.prompt != null) {
    throw new GatewayError(
      'unsupported_parameter',
      `The prompt ${request.prompt.id} is a template stored at OpenAI: a translated provider cannot read it`,
      { param: 'prompt' },
    );
  }
  const messages: ChatMessage[] = [];
  if (request.instructions) {
    messages.push({ role: 'system', content: request.instructions });
    origins?.push({ kind: 'instructions' });
  }
  messages.push(...toChatMessages(items, origins));
  const chat: ChatCompletionRequest = { model: request.model, messages };
  if (request.temperature != null) chat.temperature = request.temperature;
  if (request.top_p != null) chat.top_p = request.top_p;
  if (request.user !== undefined) chat.user = request.user;
  if (request.service_tier != null) chat.service_tier = request.service_tier;
  if (request.prompt_cache_key != null) chat.prompt_cache_key = request.prompt_cache_key;
  if (request.safety_identifier != null) chat.safety_identifier = request.safety_identifier;
  if (request.max_output_tokens != null) chat.max_completion_tokens = request.max_output_tokens;
  if (request.stream) chat.stream = true;
  const tools = toChatTools(request.tools ?? []);
  if (tools.length > 0) {
    chat.tools = tools;
    if (request.parallel_tool_calls != null) chat.parallel_tool_calls = request.parallel_tool_calls;
  }
  const choice = request.tool_choice;
  if (choice !== undefined && tools.length > 0) chat.tool_choice = toChatToolChoice(choice);
  if (tools.length > 0) boundToolCalls(chat, request.max_tool_calls);
  const format = request.text?.format;
  if (format?.type === 'json_object') chat.response_format = { type: 'json_object' };
  if (format?.type === 'json_schema') {
    chat.response_format = {
      type: 'json_schema',
      json_schema: {
        name: format.name,
        schema: format.schema,
        ...(format.description !== undefined && { description: format.description }),
        ...(format.strict != null && { strict: format.strict }),
      },
    };
  }
  const effort = request.reasoning?.effort;
  if (effort === 'none') chat.thinking = { type: 'disabled' };
  else if (effort != null)
    chat.thinking = { type: 'enabled', budget_tokens: thinkingBudget(effort, request.max_output_tokens) };
  return chat;
}

/**
 * `max_tool_calls` as the model is asked it: one call at a time under 1 (the answer's calls past the limit
 * are dropped from the Response: response-assembler.ts). It is at least 1, as OpenAI requires.
 */
function boundToolCalls(chat: ChatCompletionRequest, maxToolCalls: number | null | undefined): void {
  if (maxToolCalls === 1) chat.parallel_tool_calls = false;
}

/**
 * The budget of an effort, kept under `max_output_tokens`: that limit bounds reasoning and answer together
 * (as OpenAI's does, and Claude's max_tokens), and Claude refuses a budget that is not below it. Never
 * under the least budget the thinking option takes.
 */
function thinkingBudget(effort: string, maxOutputTokens: number | null | undefined): number {
  const budget = THINKING_BUDGETS[effort] ?? 8192;
  if (maxOutputTokens == null) return budget;
  return Math.max(MIN_THINKING_BUDGET, Math.min(budget, maxOutputTokens - 1));
}

function toChatToolChoice(
  choice: NonNullable<ResponsesRequest['tool_choice']>,
): NonNullable<ChatCompletionRequest['tool_choice']> {
  if (typeof choice === 'string') return choice;
  if (choice.type === 'function' && 'name' in choice) {
    return { type: 'function', function: { name: choice.name } };
  }
  if (choice.type === 'allowed_tools') return allowedTools(choice as AllowedTools);
  throw new GatewayError(
    'unsupported_parameter',
    `tool_choice of type ${choice.type} cannot be sent to a translated provider: ` +
      'only none, auto, required or a function are supported.',
    { param: 'tool_choice.type' },
  );
}

/** OpenAI's `allowed_tools` choice as the Responses API words it: a mode, and the tools it allows. */
interface AllowedTools {
  type: 'allowed_tools';
  mode?: unknown;
  tools?: unknown;
}

/**
 * The choice as chat words it (`allowed_tools.tools` of `{type: 'function', function: {name}}`), which the
 * adapters of providers without it turn into the allowed tools alone, in its mode
 * (providers/shared/allowed-tools.ts). Only function tools can be allowed on a translated provider.
 */
function allowedTools(choice: AllowedTools): NonNullable<ChatCompletionRequest['tool_choice']> {
  if (choice.mode !== 'auto' && choice.mode !== 'required') {
    throw new GatewayError('invalid_body', 'tool_choice.mode must be "auto" or "required"', {
      param: 'tool_choice.mode',
    });
  }
  if (!Array.isArray(choice.tools)) {
    throw new GatewayError('invalid_body', 'tool_choice.tools must be a list of tools', {
      param: 'tool_choice.tools',
    });
  }
  const tools = choice.tools.map((tool: { type?: unknown; name?: unknown } | null, i) => {
    if (tool?.type !== 'function' || typeof tool.name !== 'string') {
      throw new GatewayError(
        'unsupported_parameter',
        `tool_choice.tools[${i}] cannot be allowed on a translated provider: only function tools can`,
        { param: `tool_choice.tools[${i}].type` },
      );
    }
    return { type: 'function' as const, function: { name: tool.name } };
  });
  return { type: 'allowed_tools', allowed_tools: { mode: choice.mode, tools } };
}

function toChatTools(tools: NonNullable<ResponsesRequest['tools']>): Tools {
  const refused = tools.map((tool) => tool.type).filter((type) => type !== 'function');
  if (refused.length > 0) {
    const index = tools.findIndex((tool) => tool.type !== 'function');
    throw new GatewayError(
      'unsupported_parameter',
      `Built-in tools cannot run on a translated provider: ${[...new Set(refused)].join(', ')}. ` +
        'Only function tools are supported.',
      { param: `tools[${index}].type` },
    );
  }
  return tools.map((tool) => {
    const fn = tool as Extract<typeof tool, { type: 'function' }>;
    // Chat's tools are not strict unless they say so; a Responses tool without `strict` may be.
    const strict = effectiveStrict(fn);
    return {
      type: 'function' as const,
      function: {
        name: fn.name,
        ...(fn.description != null && { description: fn.description }),
        ...(fn.parameters != null && { parameters: fn.parameters }),
        ...((strict || fn.strict != null) && { strict }),
      },
    };
  });
}

/**
 * The items as chat messages; an assistant turn gathers its reasoning, text and tool calls. `origins`,
 * when given, gets each message's origin (see toChatRequest).
 */
export function toChatMessages(
  items: readonly ConversationItem[],
  origins: MessageOrigin[] = [],
): ChatMessage[] {
  const messages: ChatMessage[] = [];
  let assistant: AssistantMessage | undefined;
  let turn: Extract<MessageOrigin, { kind: 'assistant' }> | undefined;
  const push = (message: ChatMessage, origin: MessageOrigin) => {
    assistant = undefined;
    messages.push(message);
    origins.push(origin);
  };
  const openAssistant = (at: number): AssistantMessage => {
    if (!assistant) {
      assistant = { role: 'assistant', content: null };
      turn = { kind: 'assistant', item: at, parts: [], blocks: [], calls: [] };
      messages.push(assistant);
      origins.push(turn);
    }
    return assistant;
  };
  for (const [at, item] of items.entries()) {
    // A built-in tool's call or output (web_search_call …) ran at the native provider that answered that
    // turn: chat has no such turn, and the answer that follows it says what came of it.
    if (!isKnownItem(item)) continue;
    switch (item.type) {
      case 'reasoning': {
        // A Responses provider's encrypted reasoning is for that provider alone (reasoning-items.ts).
        if (!isThinkingReasoning(item)) break;
        // Where the adapters look for thinking to send back (the gateway's `content_blocks` extra).
        const message = openAssistant(at) as AssistantMessage & { content_blocks?: ContentBlock[] };
        turn!.blocks.push(at);
        if (isRedactedThinking(item)) {
          (message.content_blocks ??= []).push({ type: 'redacted_thinking', data: item.encrypted_content! });
          break;
        }
        const text = (item.content ?? []).map((part) => part.text).join('');
        (message.content_blocks ??= []).push({
          type: 'thinking',
          thinking: text,
          ...(item.encrypted_content != null && { signature: item.encrypted_content }),
        });
        break;
      }
      case 'function_call': {
        const message = openAssistant(at);
        turn!.calls.push(at);
        message.tool_calls = [
          ...(message.tool_calls ?? []),
          { id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } },
        ];
        break;
      }
      case 'function_call_output':
        push(
          { role: 'tool', tool_call_id: item.call_id, content: toolOutput(item.output, at) },
          { kind: 'tool', item: at },
        );
        break;
      default: {
        const message = item as MessageItem;
        if (message.role === 'assistant') {
          for (const [part, index] of assistantParts(message)) {
            const open = openAssistant(at);
            addAssistantPart(open, part);
            turn!.parts.push({ item: at, ...(index !== undefined && { part: index }) });
          }
        } else {
          push(nonAssistantMessage(message, at), {
            kind: message.role === 'user' ? 'user' : 'joined',
            item: at,
          });
        }
      }
    }
  }
  return messages;
}

/**
 * A function call's output as a tool message's content: its text, or its `input_text` parts as text parts.
 * A chat tool message carries text only: an image or a file among the parts is refused, not sent as JSON.
 */
function toolOutput(
  output: FunctionCallOutput['output'],
  at: number,
): string | Array<{ type: 'text'; text: string }> {
  if (typeof output === 'string') return output;
  return output.map((part, index) => {
    const { type, text } = part as { type: string; text?: unknown };
    if (type !== 'input_text' || typeof text !== 'string') {
      const param = `input[${at}].output[${index}]`;
      throw new GatewayError(
        'unsupported_parameter',
        `${param} is an ${type} part: a function_call_output sent to this provider carries text only (input_text parts)`,
        { param },
      );
    }
    return { type: 'text', text };
  });
}

function addAssistantPart(message: AssistantMessage, part: AssistantContentPart): void {
  const content = message.content;
  if (content == null) message.content = [part];
  else if (typeof content === 'string') message.content = [{ type: 'text', text: content }, part];
  else content.push(part);
}

/** The assistant message's parts as chat's, each with its index in the item (none for a string content). */
function assistantParts(message: MessageItem): Array<[AssistantContentPart, number | undefined]> {
  if (typeof message.content === 'string') return [[{ type: 'text', text: message.content }, undefined]];
  return message.content.flatMap((part, index): Array<[AssistantContentPart, number]> => {
    if (part.type === 'output_text' || part.type === 'input_text') {
      return [[{ type: 'text', text: part.text }, index]];
    }
    if (part.type === 'refusal') return [[{ type: 'refusal', refusal: part.refusal }, index]];
    return [];
  });
}

/** Chat has no `original` (the image as it is, not scaled down): `high` is the most detail it can ask. */
function chatDetail(detail: 'auto' | 'low' | 'high' | 'original'): 'auto' | 'low' | 'high' {
  return detail === 'original' ? 'high' : detail;
}

function nonAssistantMessage(message: MessageItem, at: number): ChatMessage {
  const role = message.role as 'user' | 'system' | 'developer';
  if (typeof message.content === 'string')
    return { role: role === 'developer' ? 'system' : role, content: message.content };
  if (role !== 'user') {
    const text = message.content.map((part) => ('text' in part ? part.text : '')).join('');
    return { role: 'system', content: text };
  }
  const parts = message.content.map((part, index): UserContentPart => {
    switch (part.type) {
      case 'input_image':
        if (!part.image_url) {
          const param = `input[${at}].content[${index}].image_url`;
          throw new GatewayError(
            'unsupported_parameter',
            `${param} is required: an input_image by file_id cannot be sent to this provider`,
            { param },
          );
        }
        return {
          type: 'image_url',
          image_url: { url: part.image_url, ...(part.detail != null && { detail: chatDetail(part.detail) }) },
        };
      case 'input_file':
        return {
          type: 'file',
          file: {
            ...(part.file_id != null && { file_id: part.file_id }),
            ...(part.file_data != null && { file_data: part.file_data }),
            ...(part.file_url != null && { file_url: part.file_url }),
            ...(part.filename != null && { filename: part.filename }),
          },
        };
      case 'refusal':
        return { type: 'text', text: part.refusal };
      default:
        return { type: 'text', text: part.text };
    }
  });
  return { role: 'user', content: parts };
}
