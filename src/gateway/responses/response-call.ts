/**
 * A Responses request before it runs: its input items given ids, the conversation of its
 * `previous_response_id` loaded, the whole translated into the canonical chat request (fitted to the
 * context window per `truncation`), and the Response it will answer with, as created. What follows is any
 * model call: a CallContext and `execute`.
 */
import type { ResponsesRequest } from '../../core/schemas/responses-request.js';
import type { ModelRequest } from '../../providers/types.js';
import type { Store, StoredResponseItem } from '../../store/types.js';
import { loadConversation } from './conversation.js';
import { newItemId, newResponseId, type ItemIdPrefix } from './response-ids.js';
import type { ConversationItem, ResponseObject, StoredInputItem } from './response-types.js';
import { toChatRequest } from './to-chat-request.js';
import { fitContextWindow } from './truncation.js';

export interface PreparedResponseCall {
  request: ModelRequest<'chat'>;
  /** The response as created (status `in_progress`, no output). */
  shell: ResponseObject;
  /** This request's input items, with their ids: what is stored and listed. */
  inputItems: StoredResponseItem[];
  /** Whether the response is stored (`store`, default true). */
  store: boolean;
}

const ID_PREFIXES: Record<string, ItemIdPrefix> = {
  message: 'msg',
  function_call: 'fc',
  function_call_output: 'fco',
  reasoning: 'rs',
};

/** The input as items with ids; text content as `input_text` parts, as the input item list shows them. */
export function inputItemsOf(input: ResponsesRequest['input']): StoredInputItem[] {
  const items = typeof input === 'string' ? [{ role: 'user' as const, content: input }] : input;
  return items.map((item): StoredInputItem => {
    const type = item.type ?? 'message';
    const id = item.id ?? newItemId(ID_PREFIXES[type] ?? 'msg');
    if (!('role' in item)) return { ...item, id };
    const content =
      typeof item.content === 'string'
        ? [
            item.role === 'assistant'
              ? { type: 'output_text' as const, text: item.content }
              : { type: 'input_text' as const, text: item.content },
          ]
        : item.content;
    return { ...item, type: 'message', id, content, status: item.status ?? 'completed' };
  });
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
  const chat = fitContextWindow({
    model: body.model,
    truncation: body.truncation ?? 'disabled',
    maxOutputTokens: body.max_output_tokens ?? 0,
    contextWindows,
    items: [...history, ...input],
    build: (items) => toChatRequest(body, items),
  });
  return {
    request: { endpoint: 'chat', body: chat },
    shell: responseShell(body),
    inputItems: input.map((item) => ({ id: item.id, item })),
    store: body.store !== false,
  };
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
    reasoning: body.reasoning
      ? { effort: body.reasoning.effort ?? null, summary: body.reasoning.summary ?? null }
      : null,
    store: body.store !== false,
    temperature: body.temperature ?? 1,
    text: { format: body.text?.format ?? { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? 'disabled',
    ...(body.user !== undefined && { user: body.user }),
    metadata: body.metadata ?? {},
  };
}
