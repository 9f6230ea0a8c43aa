/**
 * Repairs of OpenAI-wire answers that break OpenAI's schema in ways clients trip on. Mistral-family models
 * (on Mistral's API and on Azure AI) send tool calls without `type`, streamed tool-call deltas without
 * `index`, an assistant message without `content` and `tool_calls: null`; the openai SDKs' stream helpers
 * refuse the first two and typed clients read `content` as always present. Most servers of the wire format
 * (DeepSeek, Groq, xAI, Mistral…) leave out `message.refusal` or `choice.logprobs`, which OpenAI's schema
 * requires (null when there is none) and typed clients (openai-java) refuse an answer without.
 *
 * Each check is a walk over the choices with no allocation; an answer that needs nothing comes back as the
 * same object (or `undefined` for a chunk), so the gateway still relays the upstream's bytes exactly.
 */
import type { ChatCompletionChunk } from '../../core/openai-types.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A function call that does not say it is one (custom tool calls carry `custom`, not `function`). */
const lacksType = (call: unknown): call is Json =>
  isObject(call) && call.type === undefined && isObject(call.function);

function messageNeedsRepair(message: unknown): message is Json {
  if (!isObject(message)) return false;
  if (!('content' in message) || !('refusal' in message) || message.tool_calls === null) return true;
  const calls = message.tool_calls;
  return Array.isArray(calls) && calls.some(lacksType);
}

/** A chat or text completion's choice (it has a `message` or a `text`) that lacks `logprobs`. */
const lacksLogprobs = (choice: Json): boolean =>
  !('logprobs' in choice) && ('message' in choice || 'text' in choice);

const choiceNeedsRepair = (choice: unknown): choice is Json =>
  isObject(choice) && (lacksLogprobs(choice) || messageNeedsRepair(choice.message));

/** A completion with `content: null` and `refusal: null` where the message had none, `type: 'function'` on
 * its function calls, no `tool_calls: null` and `logprobs: null` on a choice without them; the same object
 * when nothing needs repair. The input is not changed. */
export function repairChatCompletion(body: Json): Json {
  const choices = body.choices;
  if (!Array.isArray(choices) || !choices.some(choiceNeedsRepair)) return body;
  return {
    ...body,
    choices: choices.map((choice: unknown) => {
      if (!choiceNeedsRepair(choice)) return choice;
      const out: Json = { ...choice };
      if (lacksLogprobs(choice)) out.logprobs = null;
      if (messageNeedsRepair(choice.message)) out.message = repairMessage(choice.message);
      return out;
    }),
  };
}

function repairMessage(message: Json): Json {
  const out: Json = { ...message };
  if (!('content' in out)) out.content = null;
  if (!('refusal' in out)) out.refusal = null;
  if (out.tool_calls === null) delete out.tool_calls;
  if (Array.isArray(out.tool_calls)) {
    out.tool_calls = out.tool_calls.map((call: unknown) =>
      lacksType(call) ? { ...call, type: 'function' } : call,
    );
  }
  return out;
}

/** What a stream has said of one choice's tool calls: their ids by position, and the call last named. */
interface ChoiceToolCalls {
  ids: Array<string | undefined>;
  current: number;
}

/**
 * For one stream: gives each tool-call delta the `index` of its call (its position among the choice's tool
 * calls, followed by `id` across chunks; a delta with neither continues the call last named) and the first
 * delta of a function call its `type`. Returns a repaired copy of the chunk, or `undefined` when the chunk
 * needs nothing. Chunks without tool calls cost one property read per choice.
 */
export function createToolCallDeltaRepair(): (chunk: ChatCompletionChunk) => ChatCompletionChunk | undefined {
  const byChoice = new Map<number, ChoiceToolCalls>();
  const stateOf = (choice: number): ChoiceToolCalls => {
    let state = byChoice.get(choice);
    if (!state) byChoice.set(choice, (state = { ids: [], current: -1 }));
    return state;
  };

  return (chunk) => {
    let choices: ChatCompletionChunk['choices'] | undefined;
    for (let position = 0; position < chunk.choices.length; position++) {
      const choice = chunk.choices[position]!;
      const calls: unknown = (choice as { delta?: { tool_calls?: unknown } } | null)?.delta?.tool_calls;
      if (!Array.isArray(calls) || calls.length === 0) continue;
      const state = stateOf(typeof choice.index === 'number' ? choice.index : position);
      const repaired = repairToolCallDeltas(state, calls);
      if (repaired === calls) continue;
      choices ??= [...chunk.choices];
      choices[position] = { ...choice, delta: { ...choice.delta, tool_calls: repaired as never } };
    }
    return choices ? { ...chunk, choices } : undefined;
  };
}

function repairToolCallDeltas(state: ChoiceToolCalls, calls: unknown[]): unknown[] {
  let out: unknown[] | undefined;
  for (let position = 0; position < calls.length; position++) {
    const call: unknown = calls[position];
    if (!isObject(call)) continue;
    const id = typeof call.id === 'string' ? call.id : undefined;
    const hasIndex = typeof call.index === 'number';
    let index: number;
    let starts = false;
    if (hasIndex) {
      index = call.index as number;
      starts = id !== undefined && state.ids[index] !== id;
      if (starts) state.ids[index] = id;
    } else if (id !== undefined) {
      index = state.ids.indexOf(id);
      starts = index < 0;
      if (starts) index = state.ids.push(id) - 1;
    } else {
      index = state.current >= 0 ? state.current : state.ids.push(undefined) - 1;
    }
    state.current = index;
    const addType = starts && lacksType(call);
    if (hasIndex && !addType) continue;
    out ??= [...calls];
    const fixed: Json = { index, ...call };
    fixed.index = index;
    if (addType) fixed.type = 'function';
    out[position] = fixed;
  }
  return out ?? calls;
}
