// Responses API answers (`POST /v1/responses`) shaped after the recorded OpenAI and Azure OpenAI responses
// in provider-fixtures/openai/responses/ and provider-fixtures/azure/: the same Response fields, the same
// event grammar (`response.created`, `…in_progress`, per item `output_item.added` … `output_item.done`,
// `response.completed` / `response.incomplete`), each event with its `sequence_number`, sent as
// `event: <type>` + `data: <json>` frames without `[DONE]`.
import { randomBytes } from 'node:crypto';
import { countTokens, splitIntoPieces } from './request-text.js';
import { servedTier } from './chat.js';

export interface ResponsesRequestBody {
  model?: string;
  input?: unknown;
  instructions?: string | null;
  tools?: Array<{ type?: string; name?: string }>;
  tool_choice?: string | { type?: string; name?: string };
  reasoning?: { effort?: string | null; summary?: string | null } | null;
  include?: string[] | null;
  max_output_tokens?: number | null;
  store?: boolean | null;
  stream?: boolean;
  temperature?: number | null;
  top_p?: number | null;
  text?: unknown;
  parallel_tool_calls?: boolean | null;
  truncation?: string | null;
  user?: string;
}

type Item = Record<string, unknown>;

const hex = (bytes: number): string => randomBytes(bytes).toString('hex');
const itemId = (prefix: string): string => `${prefix}_${hex(25)}`;

function partText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: { text?: unknown }) => (typeof part?.text === 'string' ? part.text : ''))
    .filter(Boolean)
    .join(' ');
}

/** The text of the last user message of the input (a string input is one). */
export function lastUserInputText(input: unknown): string {
  if (typeof input === 'string') return input;
  if (!Array.isArray(input)) return '';
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i] as { role?: string; content?: unknown };
    if (item?.role === 'user') return partText(item.content);
  }
  return '';
}

function allInputText(request: ResponsesRequestBody): string {
  const items = typeof request.input === 'string' ? [{ content: request.input }] : request.input;
  const texts = Array.isArray(items)
    ? items.map((item: { content?: unknown }) => partText(item?.content))
    : [];
  return [request.instructions ?? '', ...texts].join(' ');
}

export interface ResponsePlan {
  model: string;
  items: Item[];
  /** Whole text of the message item, when there is one. */
  text: string | undefined;
  incomplete: boolean;
  inputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
}

/**
 * What the fake answers: `[<name>] <last user text>` as a message; a function call instead when
 * `tool_choice` forces one (arguments `{"input": "<last user text>"}`); a reasoning item first when
 * `reasoning.effort` asks for it (its `encrypted_content` only with `include: ["reasoning.encrypted_content"]`);
 * `max_output_tokens` cuts the text (one token per word: status `incomplete`).
 */
export function planResponse(
  name: string,
  request: ResponsesRequestBody,
  textOverride?: string,
): ResponsePlan {
  const userText = lastUserInputText(request.input);
  const items: Item[] = [];
  let reasoningTokens = 0;
  const effort = request.reasoning?.effort;
  if (effort && effort !== 'none') {
    reasoningTokens = 8;
    items.push({
      id: itemId('rs'),
      type: 'reasoning',
      ...(request.include?.includes('reasoning.encrypted_content') && {
        encrypted_content: `gAAAAAB${Buffer.from(`${name}:${userText}`).toString('base64')}`,
      }),
      summary: [{ type: 'summary_text', text: `**Thinking** about ${userText}` }],
    });
  }
  const tools = (request.tools ?? []).filter((tool) => tool.type === 'function');
  const choice = request.tool_choice;
  const forced =
    choice === 'required'
      ? tools[0]?.name
      : typeof choice === 'object' && choice?.type === 'function'
        ? choice.name
        : undefined;
  let text: string | undefined;
  let incomplete = false;
  let outputTokens = reasoningTokens;
  if (forced) {
    const args = JSON.stringify({ input: userText });
    items.push({
      id: itemId('fc'),
      type: 'function_call',
      status: 'completed',
      arguments: args,
      call_id: `call_${hex(12)}`,
      name: forced,
    });
    outputTokens += countTokens(args);
  } else {
    text = textOverride ?? `[${name}] ${userText || 'Hello!'}`;
    const max = request.max_output_tokens ?? undefined;
    const pieces = splitIntoPieces(text);
    if (max !== undefined && pieces.length > max) {
      text = pieces.slice(0, max).join('');
      incomplete = true;
    }
    items.push({
      id: itemId('msg'),
      type: 'message',
      status: incomplete ? 'incomplete' : 'completed',
      content: [{ type: 'output_text', annotations: [], logprobs: [], text }],
      role: 'assistant',
    });
    outputTokens += countTokens(text);
  }
  return {
    model: typeof request.model === 'string' ? request.model : 'gpt-4o-mini',
    items,
    text,
    incomplete,
    inputTokens: countTokens(allInputText(request)),
    outputTokens,
    reasoningTokens,
  };
}

function responseObject(
  id: string,
  createdAt: number,
  request: ResponsesRequestBody,
  plan: ResponsePlan,
  status: 'in_progress' | 'completed' | 'incomplete',
  output: Item[],
) {
  const done = status !== 'in_progress';
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status,
    background: false,
    completed_at: status === 'completed' ? createdAt + 1 : null,
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    max_tool_calls: null,
    model: plan.model,
    output,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: null,
    prompt_cache_key: null,
    reasoning: { effort: request.reasoning?.effort ?? null, summary: request.reasoning?.summary ?? null },
    safety_identifier: null,
    service_tier: servedTier((request as { service_tier?: unknown }).service_tier),
    store: request.store ?? true,
    temperature: request.temperature ?? 1,
    text: request.text ?? { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: request.tool_choice ?? 'auto',
    tools: request.tools ?? [],
    top_logprobs: 0,
    top_p: request.top_p ?? 1,
    truncation: request.truncation ?? 'disabled',
    usage: done
      ? {
          input_tokens: plan.inputTokens,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: plan.outputTokens,
          output_tokens_details: { reasoning_tokens: plan.reasoningTokens },
          total_tokens: plan.inputTokens + plan.outputTokens,
        }
      : null,
    user: request.user ?? null,
    metadata: {},
  };
}

export function responseAnswer(request: ResponsesRequestBody, plan: ResponsePlan) {
  return responseObject(
    `resp_${hex(25)}`,
    Math.floor(Date.now() / 1000),
    request,
    plan,
    plan.incomplete ? 'incomplete' : 'completed',
    plan.items,
  );
}

/** Every event of a streamed answer, in order, numbered from 0. */
export function responseEvents(request: ResponsesRequestBody, plan: ResponsePlan): object[] {
  const id = `resp_${hex(25)}`;
  const createdAt = Math.floor(Date.now() / 1000);
  const events: Record<string, unknown>[] = [];
  const push = (type: string, fields: Record<string, unknown>) =>
    events.push({ type, sequence_number: events.length, ...fields });
  push('response.created', { response: responseObject(id, createdAt, request, plan, 'in_progress', []) });
  push('response.in_progress', { response: responseObject(id, createdAt, request, plan, 'in_progress', []) });
  plan.items.forEach((item, output_index) => {
    const item_id = item.id as string;
    if (item.type === 'reasoning') {
      const summary = (item.summary as Array<{ text: string }>)[0]!.text;
      push('response.output_item.added', { output_index, item: { ...item, summary: [] } });
      const base = { item_id, output_index, summary_index: 0 };
      push('response.reasoning_summary_part.added', { ...base, part: { type: 'summary_text', text: '' } });
      push('response.reasoning_summary_text.delta', { ...base, delta: summary, obfuscation: 'x' });
      push('response.reasoning_summary_text.done', { ...base, text: summary });
      push('response.reasoning_summary_part.done', {
        ...base,
        part: { type: 'summary_text', text: summary },
      });
    } else if (item.type === 'message') {
      push('response.output_item.added', {
        output_index,
        item: { ...item, status: 'in_progress', content: [] },
      });
      const base = { item_id, output_index, content_index: 0 };
      push('response.content_part.added', {
        ...base,
        part: { type: 'output_text', annotations: [], logprobs: [], text: '' },
      });
      const text = plan.text ?? '';
      for (const piece of splitIntoPieces(text)) {
        push('response.output_text.delta', { ...base, delta: piece, logprobs: [], obfuscation: 'x' });
      }
      push('response.output_text.done', { ...base, text, logprobs: [] });
      push('response.content_part.done', {
        ...base,
        part: { type: 'output_text', annotations: [], logprobs: [], text },
      });
    } else {
      push('response.output_item.added', {
        output_index,
        item: { ...item, status: 'in_progress', arguments: '' },
      });
      push('response.function_call_arguments.delta', {
        item_id,
        output_index,
        delta: item.arguments,
        obfuscation: 'x',
      });
      push('response.function_call_arguments.done', { item_id, output_index, arguments: item.arguments });
    }
    push('response.output_item.done', { output_index, item });
  });
  const status = plan.incomplete ? 'incomplete' : 'completed';
  push(`response.${status}`, { response: responseObject(id, createdAt, request, plan, status, plan.items) });
  return events;
}

/** The frames of a Responses stream: `event:` names and `data:`, no `[DONE]`. */
export function responseFrames(events: object[]): string[] {
  return events.map(
    (event) => `event: ${(event as { type: string }).type}\ndata: ${JSON.stringify(event)}\n\n`,
  );
}
