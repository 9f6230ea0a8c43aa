/**
 * Turns a stored stream into the equivalent whole body and back, for chat completions and text
 * completions. The cache keys streamed and non-streamed answers apart, so these serve the places that
 * need the other form of an answer: the log record of a streamed call, or serving one form from the
 * other.
 */
import type { ChatCompletion, TextCompletion, ToolCall } from '../../core/openai-types.js';

type Json = Record<string, unknown>;

/**
 * The whole body a stream adds up to: a `chat.completion` for `chat.completion.chunk` events, a
 * `text_completion` for text completion events. Undefined when the chunks are not one of these.
 */
export function streamToBody(chunks: readonly string[]): ChatCompletion | TextCompletion | undefined {
  const events: Json[] = [];
  for (const chunk of chunks) {
    try {
      const event: unknown = JSON.parse(chunk);
      if (isRecord(event)) events.push(event);
    } catch {
      return undefined;
    }
  }
  const object = events.find((e) => typeof e.object === 'string')?.object;
  if (object === 'chat.completion.chunk') return assembleChat(events);
  if (object === 'text_completion') return assembleText(events);
  return undefined;
}

/**
 * The stream that carries a whole body: per choice, one chunk with the message and one with the
 * finish reason, then a usage chunk (no choices) when the body has usage. Undefined for bodies that are
 * neither a `chat.completion` nor a `text_completion`.
 */
export function bodyToStreamChunks(body: unknown): string[] | undefined {
  if (!isRecord(body) || !Array.isArray(body.choices)) return undefined;
  if (body.object === 'chat.completion') return chatToChunks(body as unknown as ChatCompletion);
  if (body.object === 'text_completion') return textToChunks(body as unknown as TextCompletion);
  return undefined;
}

/** One choice of a stream, folded from all its chunks. */
interface FoldedChoice<Draft> {
  index: number;
  draft: Draft;
  finishReason: unknown;
  logprobs: Json | null;
}

/**
 * The choices of a stream in index order, each with the last finish reason and the logprobs of all
 * its chunks, and its own content folded into `draft` by `merge`; and the stream's usage.
 */
function foldChoices<Draft>(
  events: Json[],
  start: () => Draft,
  merge: (draft: Draft, choice: Json) => void,
): { choices: FoldedChoice<Draft>[]; usage: unknown } {
  const choices = new Map<number, FoldedChoice<Draft>>();
  let usage: unknown;
  for (const event of events) {
    if (isRecord(event.usage)) usage = event.usage;
    if (!Array.isArray(event.choices)) continue;
    for (const choice of event.choices as Json[]) {
      if (!isRecord(choice)) continue;
      const index = typeof choice.index === 'number' ? choice.index : 0;
      let folded = choices.get(index);
      if (folded === undefined) {
        folded = { index, draft: start(), finishReason: null, logprobs: null };
        choices.set(index, folded);
      }
      merge(folded.draft, choice);
      if (choice.finish_reason !== null && choice.finish_reason !== undefined) {
        folded.finishReason = choice.finish_reason;
      }
      if (isRecord(choice.logprobs)) folded.logprobs = mergeLogprobs(folded.logprobs, choice.logprobs);
    }
  }
  return { choices: sortedValues(choices), usage };
}

interface ChoiceDraft {
  message: Json;
  toolCalls: Map<number, ToolCall>;
  blocks: Map<number, Json>;
}

function assembleChat(events: Json[]): ChatCompletion {
  const head = envelope(events);
  const { choices, usage } = foldChoices<ChoiceDraft>(
    events,
    () => ({
      message: { role: 'assistant', content: null, refusal: null },
      toolCalls: new Map(),
      blocks: new Map(),
    }),
    (draft, choice) => {
      if (isRecord(choice.delta)) mergeDelta(draft, choice.delta);
    },
  );
  const body: Json = {
    id: head.id,
    object: 'chat.completion',
    created: head.created,
    model: head.model,
    ...(head.system_fingerprint !== undefined ? { system_fingerprint: head.system_fingerprint } : {}),
    ...(head.service_tier !== undefined ? { service_tier: head.service_tier } : {}),
    choices: choices.map(({ index, draft, finishReason, logprobs }) => {
      const message = { ...draft.message };
      if (draft.toolCalls.size > 0) message.tool_calls = sortedValues(draft.toolCalls);
      if (draft.blocks.size > 0) message.content_blocks = sortedValues(draft.blocks);
      return { index, message, finish_reason: finishReason, logprobs };
    }),
  };
  if (usage !== undefined) body.usage = usage;
  return body as unknown as ChatCompletion;
}

function mergeDelta(draft: ChoiceDraft, delta: Json): void {
  for (const [field, value] of Object.entries(delta)) {
    if (field === 'tool_calls' && Array.isArray(value)) {
      value.forEach((call: unknown, position) => {
        if (isRecord(call)) mergeToolCall(draft.toolCalls, call, position);
      });
    } else if (field === 'content_blocks' && Array.isArray(value)) {
      for (const item of value) {
        if (isRecord(item) && isRecord(item.delta)) {
          const index = typeof item.index === 'number' ? item.index : draft.blocks.size;
          draft.blocks.set(index, concatFields(draft.blocks.get(index) ?? {}, item.delta));
        }
      }
    } else if (field === 'function_call' && isRecord(value)) {
      draft.message.function_call = concatFields(
        (draft.message.function_call as Json | undefined) ?? { name: '', arguments: '' },
        value,
      );
    } else if (field === 'role') {
      if (typeof value === 'string') draft.message.role = value;
    } else if (typeof value === 'string') {
      // content, refusal and provider extras such as reasoning_content arrive in pieces.
      const before = draft.message[field];
      draft.message[field] = typeof before === 'string' ? before + value : value;
    } else if (value !== null && value !== undefined) {
      draft.message[field] = value;
    }
  }
}

function mergeToolCall(calls: Map<number, ToolCall>, delta: Json, position: number): void {
  const index = typeof delta.index === 'number' ? delta.index : position;
  const call = calls.get(index) ?? { id: '', type: 'function', function: { name: '', arguments: '' } };
  if (typeof delta.id === 'string' && delta.id !== '') call.id = delta.id;
  if (isRecord(delta.function)) {
    if (typeof delta.function.name === 'string') call.function.name += delta.function.name;
    if (typeof delta.function.arguments === 'string') call.function.arguments += delta.function.arguments;
  }
  calls.set(index, call);
}

function mergeLogprobs(before: Json | null, next: Json): Json {
  const merged: Json = { ...(before ?? {}) };
  for (const [field, value] of Object.entries(next)) {
    const earlier = merged[field];
    merged[field] = Array.isArray(value) && Array.isArray(earlier) ? [...earlier, ...value] : value;
  }
  return merged;
}

function assembleText(events: Json[]): TextCompletion {
  const head = envelope(events);
  const { choices, usage } = foldChoices(
    events,
    () => ({ text: '' }),
    (draft, choice) => {
      if (typeof choice.text === 'string') draft.text += choice.text;
    },
  );
  const body: Json = {
    id: head.id,
    object: 'text_completion',
    created: head.created,
    model: head.model,
    ...(head.system_fingerprint !== undefined ? { system_fingerprint: head.system_fingerprint } : {}),
    choices: choices.map(({ index, draft, finishReason, logprobs }) => ({
      index,
      text: draft.text,
      finish_reason: finishReason,
      logprobs,
    })),
  };
  if (usage !== undefined) body.usage = usage;
  return body as unknown as TextCompletion;
}

function chatToChunks(body: ChatCompletion): string[] {
  const head = {
    id: body.id,
    object: 'chat.completion.chunk',
    created: body.created,
    model: body.model,
    ...(body.system_fingerprint !== undefined ? { system_fingerprint: body.system_fingerprint } : {}),
    ...(body.service_tier !== undefined ? { service_tier: body.service_tier } : {}),
  };
  const chunks: string[] = [];
  for (const choice of body.choices) {
    const { tool_calls, content_blocks, function_call, ...rest } = choice.message as Json & {
      tool_calls?: ToolCall[];
      content_blocks?: Json[];
      function_call?: Json;
    };
    const delta: Json = {};
    for (const [field, value] of Object.entries(rest)) if (value !== null) delta[field] = value;
    if (tool_calls) delta.tool_calls = tool_calls.map((call, index) => ({ index, ...call }));
    if (content_blocks)
      delta.content_blocks = content_blocks.map((block, index) => ({ index, delta: block }));
    if (function_call) delta.function_call = function_call;
    const logprobs = choice.logprobs ?? null;
    chunks.push(
      JSON.stringify({ ...head, choices: [{ index: choice.index, delta, logprobs, finish_reason: null }] }),
      JSON.stringify({
        ...head,
        choices: [{ index: choice.index, delta: {}, logprobs: null, finish_reason: choice.finish_reason }],
      }),
    );
  }
  if (body.usage) chunks.push(JSON.stringify({ ...head, choices: [], usage: body.usage }));
  return chunks;
}

function textToChunks(body: TextCompletion): string[] {
  const { choices, usage, ...head } = body;
  const chunks = choices.map((choice) => JSON.stringify({ ...head, choices: [choice] }));
  if (usage) chunks.push(JSON.stringify({ ...head, choices: [], usage }));
  return chunks;
}

/** id, created, model, … of a stream: the first event that carries each. */
function envelope(events: Json[]): Json {
  const head: Json = {};
  for (const field of ['id', 'created', 'model', 'system_fingerprint', 'service_tier']) {
    const carrier = events.find((e) => e[field] !== undefined && e[field] !== null);
    if (carrier) head[field] = carrier[field];
  }
  return head;
}

function concatFields(target: Json, delta: Json): Json {
  const merged = { ...target };
  for (const [field, value] of Object.entries(delta)) {
    const before = merged[field];
    merged[field] =
      typeof value === 'string' && typeof before === 'string' && field !== 'type' ? before + value : value;
  }
  return merged;
}

function sortedValues<T>(map: Map<number, T>): T[] {
  return [...map.entries()].sort(([a], [b]) => a - b).map(([, value]) => value);
}

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
