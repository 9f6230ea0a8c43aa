/**
 * A Responses request before it runs: its input items given ids, the conversation of its
 * `previous_response_id` loaded and fitted to the context window per `truncation`, the whole made into the
 * request the pipeline carries — the Responses request a provider with the API natively gets (the whole
 * conversation in `input`, `store: false`: the gateway keeps the conversation, never the provider), which
 * steps/responses-step.ts translates to chat for every other target —, and the Response it will answer
 * with, as created. What follows is any model call: a CallContext and `execute`.
 */
import type {
  FunctionCallItem,
  FunctionCallOutputItem,
  ResponsesRequest,
} from '../../core/schemas/responses-request.js';
import { effectiveStrict } from '../../core/schemas/strict-function-schema.js';
import type { ModelRequest } from '../../providers/types.js';
import type { Store, StoredResponseItem } from '../../store/types.js';
import { estimateTokens } from './context-windows.js';
import { loadConversation } from './conversation.js';
import { newItemId, newResponseId, type ItemIdPrefix } from './response-ids.js';
import type { ConversationItem, ResponseObject, StoredInputItem } from './response-types.js';
import { toChatMessages } from './to-chat-request.js';
import { fitContextWindow } from './truncation.js';

export interface PreparedResponseCall {
  request: ModelRequest<'responses'>;
  /** The response as created (status `in_progress`, no output). */
  shell: ResponseObject;
  /** This request's input items, with their ids: what is stored and listed. */
  inputItems: StoredResponseItem[];
  /** Whether the response is stored (`store`, default true). */
  store: boolean;
  /** The index of this request's first input item in the request's `input`, after the stored conversation
   * (negative when `truncation: auto` left out some of this request's items): item-paths.ts. */
  inputOffset: number;
}

const ID_PREFIXES: Record<string, ItemIdPrefix> = {
  message: 'msg',
  function_call: 'fc',
  function_call_output: 'fco',
  reasoning: 'rs',
};

/**
 * The input as items with ids, text content as `input_text` parts (an assistant's as `output_text` parts,
 * with annotations and logprobs), an image with its `detail`, as the input item list shows them; a message, a function call and its
 * output also with a status (the OpenAI document requires theirs).
 */
export function inputItemsOf(input: ResponsesRequest['input']): StoredInputItem[] {
  const items = typeof input === 'string' ? [{ role: 'user' as const, content: input }] : input;
  return items.map((item): StoredInputItem => {
    const type = item.type ?? 'message';
    const id = item.id ?? newItemId(ID_PREFIXES[type] ?? 'msg');
    if (type === 'function_call' || type === 'function_call_output') {
      const call = item as FunctionCallItem | FunctionCallOutputItem;
      return { ...call, id, status: call.status ?? 'completed' };
    }
    if (!('role' in item)) return { ...item, id };
    const parts =
      typeof item.content === 'string'
        ? [
            item.role === 'assistant'
              ? { type: 'output_text' as const, text: item.content }
              : { type: 'input_text' as const, text: item.content },
          ]
        : item.content;
    const content = parts.map((part) =>
      part.type === 'output_text' ? outputText(part) : part.type === 'input_image' ? inputImage(part) : part,
    );
    return { ...item, type: 'message', id, content, status: item.status ?? 'completed' };
  });
}

/** An image with its `detail`, which the document requires of a listed image: `auto`, OpenAI's default. */
function inputImage<T extends { type: 'input_image'; detail?: string | null }>(part: T): T {
  return part.detail == null ? { ...part, detail: 'auto' } : part;
}

/** An assistant's text as an output message holds it: with its annotations and logprobs (none given: []). */
function outputText<T extends { type: 'output_text'; text: string }>(part: T): T {
  const given = part as T & { annotations?: unknown; logprobs?: unknown };
  return { ...part, annotations: given.annotations ?? [], logprobs: given.logprobs ?? [] };
}

export async function prepareResponseCall(
  store: Store,
  workspaceId: string,
  body: ResponsesRequest,
  contextWindows: Readonly<Record<string, number>> = {},
): Promise<PreparedResponseCall> {
  const input = inputItemsOf(body.input);
  const history: ConversationItem[] = body.previous_response_id
    ? await loadConversation(store, workspaceId, body.previous_response_id)
    : [];
  const items = fitContextWindow({
    model: body.model,
    truncation: body.truncation ?? 'disabled',
    maxOutputTokens: body.max_output_tokens ?? 0,
    contextWindows,
    items: [...history, ...input],
    measure: (kept) => measureInput(body, kept),
  });
  return {
    request: { endpoint: 'responses', body: upstreamRequest(body, items) },
    shell: responseShell(body),
    inputItems: input.map((item) => ({ id: item.id, item })),
    store: body.store !== false,
    inputOffset: items.length - input.length,
  };
}

/** Models that reason by default, whose reasoning is asked back encrypted even when `reasoning` is not set. */
const REASONING_MODEL = /(^|[/.-])(o\d|gpt-5|codex)/i;

/**
 * The request the pipeline carries: the client's, with the whole conversation as its input, nothing of
 * the gateway's own (`previous_response_id`, `metadata`) and nothing stored by the provider (`store: false`,
 * no `background` run, which the provider would keep and answer `queued`: a background response is the
 * gateway's own job, which calls the provider in the foreground). Reasoning comes back encrypted (`include: ["reasoning.encrypted_content"]`) so that the next
 * turn can send it again without the provider's storage.
 */
function upstreamRequest(body: ResponsesRequest, items: readonly ConversationItem[]): ResponsesRequest {
  const {
    previous_response_id: _previous,
    metadata: _metadata,
    store: _store,
    background: _background,
    ...rest
  } = body;
  const include = new Set(body.include ?? []);
  if (body.reasoning?.effort !== 'none' && (body.reasoning != null || REASONING_MODEL.test(body.model))) {
    include.add('reasoning.encrypted_content');
  }
  return {
    ...rest,
    input: items.map(withoutOwnId) as ResponsesRequest['input'],
    ...(body.tools != null && { tools: body.tools.map(withItsMode) }),
    store: false,
    ...(include.size > 0 && { include: [...include] }),
  };
}

/**
 * A function tool with the mode the Response shows (echoedTool) said: without it, OpenAI would make strict a
 * schema it can rewrite to fit (its `required` grown to every property), which the Response would not show
 * and a translated target would not do; every target runs the tool the same way.
 */
function withItsMode(tool: NonNullable<ResponsesRequest['tools']>[number]): typeof tool {
  if (tool.type !== 'function' || !('name' in tool) || tool.strict != null) return tool;
  return { ...tool, strict: effectiveStrict(tool) };
}

/**
 * An item as the provider gets it: the ids the gateway gave the client's messages and tool outputs are
 * its own (the provider's input messages have none), and fresh on every request, which would make two
 * equal requests differ (the cache). Output items keep theirs: the API requires them.
 */
function withoutOwnId(item: ConversationItem): ConversationItem {
  const own = item.type === 'function_call_output' || ('role' in item && item.role !== 'assistant');
  if (!own) return item;
  const { id: _id, ...rest } = item;
  return rest as ConversationItem;
}

/** The estimated tokens of the request with these items, as a chat request would carry them. */
function measureInput(body: ResponsesRequest, items: readonly ConversationItem[]): number {
  let messages: unknown;
  try {
    messages = toChatMessages(items);
  } catch {
    // Items chat cannot carry (an image by file id) are measured as they are.
    messages = items;
  }
  const instructions = body.instructions ? [{ role: 'system', content: body.instructions }] : [];
  return estimateTokens([...instructions, ...(messages as unknown[])]) + estimateTokens(body.tools ?? []);
}

/**
 * A function tool as the Response shows it: `parameters` always there (null when not given), `strict` the
 * mode it runs in (without one, strict when its schema allows it, as OpenAI's).
 */
function echoedTool(tool: NonNullable<ResponsesRequest['tools']>[number]): typeof tool {
  if (tool.type !== 'function' || !('name' in tool)) return tool;
  return { ...tool, parameters: tool.parameters ?? null, strict: effectiveStrict(tool) };
}

/**
 * The reasoning settings as the Response shows them. `generate_summary` is the deprecated name of `summary`:
 * the spec's Response lists it, OpenAI's document both, so either name asked shows under both.
 */
function echoedReasoning(reasoning: NonNullable<ResponsesRequest['reasoning']>): ResponseObject['reasoning'] {
  const summary = reasoning.summary ?? reasoning.generate_summary ?? null;
  return { effort: reasoning.effort ?? null, summary, generate_summary: summary };
}

function responseShell(body: ResponsesRequest): ResponseObject {
  return {
    id: newResponseId(),
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'in_progress',
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: body.model,
    output: [],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: body.reasoning ? echoedReasoning(body.reasoning) : null,
    store: body.store !== false,
    temperature: body.temperature ?? 1,
    // With its other settings (verbosity), as the request gave them.
    text: { ...body.text, format: body.text?.format ?? { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: (body.tools ?? []).map(echoedTool),
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? 'disabled',
    ...(body.user != null && { user: body.user }),
    service_tier: body.service_tier ?? null,
    prompt_cache_key: body.prompt_cache_key ?? null,
    prompt_cache_retention: body.prompt_cache_retention ?? null,
    safety_identifier: body.safety_identifier ?? null,
    top_logprobs: body.top_logprobs ?? 0,
    max_tool_calls: body.max_tool_calls ?? null,
    background: body.background === true,
    metadata: body.metadata ?? {},
  };
}
