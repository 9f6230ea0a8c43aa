/**
 * Repairs of OpenAI-wire answers that break OpenAI's schema in ways clients trip on. Mistral-family models
 * (on Mistral's API and on Azure AI) send tool calls without `type`, streamed tool-call deltas without
 * `index`, an assistant message without `content` and `tool_calls: null`; the openai SDKs' stream helpers
 * refuse the first two and typed clients read `content` as always present. Most servers of the wire format
 * (DeepSeek, Groq, xAI, Mistral…) leave out `message.refusal` or `choice.logprobs`, which OpenAI's schema
 * requires (null when there is none) and typed clients (openai-java) refuse an answer without. Mistral's
 * reasoning models (Magistral) answer `content` as a list of blocks, thinking and text, where OpenAI's is a
 * string: the text becomes `content`, the thinking a thinking content block when the call is not strict
 * (as every adapter returns thinking). Strict mode also leaves out a `service_tier` OpenAI does not have
 * (Groq's `on_demand`). xAI's chat usage leaves the reasoning tokens out of `completion_tokens` (its
 * `total_tokens` adds them apart), where OpenAI's counts them in: they are added to it, so clients, the
 * price and the token limits read the output as OpenAI's usage means it.
 *
 * Each check is a walk over the choices with no allocation; an answer that needs nothing comes back as the
 * same object (or `undefined` for a chunk), so the gateway still relays the upstream's bytes exactly.
 */
import type { ChatCompletionChunk, ContentBlock } from '../../core/openai-types.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** OpenAI's service tiers. Groq answers its own (`on_demand`), which strict mode leaves out. */
const SERVICE_TIERS = new Set(['auto', 'default', 'flex', 'scale', 'priority', 'fast']);

/** A function call that does not say it is one (custom tool calls carry `custom`, not `function`). */
const lacksType = (call: unknown): call is Json =>
  isObject(call) && call.type === undefined && isObject(call.function);

function messageNeedsRepair(message: unknown): message is Json {
  if (!isObject(message)) return false;
  if (!('content' in message) || !('refusal' in message) || message.tool_calls === null) return true;
  if (Array.isArray(message.content)) return true;
  const calls = message.tool_calls;
  return Array.isArray(calls) && calls.some(lacksType);
}

/** A chat or text completion's choice (it has a `message` or a `text`) that lacks `logprobs`. */
const lacksLogprobs = (choice: Json): boolean =>
  !('logprobs' in choice) && ('message' in choice || 'text' in choice);

const choiceNeedsRepair = (choice: unknown): choice is Json =>
  isObject(choice) && (lacksLogprobs(choice) || messageNeedsRepair(choice.message));

/** A usage whose `completion_tokens` leave out its reasoning tokens, as xAI's do: its total is the prompt,
 * the completion and the reasoning. OpenAI's total is the prompt and the completion (reasoning within). */
function reasoningLeftOut(usage: unknown): usage is Json & { completion_tokens: number } {
  if (!isObject(usage)) return false;
  const { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total } = usage;
  const details = usage.completion_tokens_details;
  const reasoning = isObject(details) ? details.reasoning_tokens : undefined;
  return (
    typeof prompt === 'number' &&
    typeof completion === 'number' &&
    typeof reasoning === 'number' &&
    reasoning > 0 &&
    total === prompt + completion + reasoning
  );
}

/** The usage with its reasoning tokens counted in `completion_tokens`; the same object when they are. */
export function repairUsage<T>(usage: T): T {
  if (!reasoningLeftOut(usage)) return usage;
  const reasoning = (usage.completion_tokens_details as { reasoning_tokens: number }).reasoning_tokens;
  return { ...usage, completion_tokens: usage.completion_tokens + reasoning };
}

/** A completion with `content: null` and `refusal: null` where the message had none, its text as `content`
 * where it was a list of blocks, `type: 'function'` on its function calls, no `tool_calls: null` and
 * `logprobs: null` on a choice without them; the same object when nothing needs repair. The input is not
 * changed. `strict`: no thinking content blocks, no service tier of a provider's own. */
export function repairChatCompletion(body: Json, strict: boolean): Json {
  const choices = body.choices;
  const repairChoices = Array.isArray(choices) && choices.some(choiceNeedsRepair);
  const foreignTier =
    strict && typeof body.service_tier === 'string' && !SERVICE_TIERS.has(body.service_tier);
  const repairCounts = reasoningLeftOut(body.usage);
  if (!repairChoices && !foreignTier && !repairCounts) return body;
  const out: Json = { ...body };
  if (foreignTier) delete out.service_tier;
  if (repairCounts) out.usage = repairUsage(body.usage);
  if (!repairChoices) return out;
  out.choices = (choices as unknown[]).map((choice: unknown) => {
    if (!choiceNeedsRepair(choice)) return choice;
    const repaired: Json = { ...choice };
    if (lacksLogprobs(choice)) repaired.logprobs = null;
    if (messageNeedsRepair(choice.message)) repaired.message = repairMessage(choice.message, strict);
    return repaired;
  });
  return out;
}

function repairMessage(message: Json, strict: boolean): Json {
  const out: Json = { ...message };
  if (!('content' in out)) out.content = null;
  if (Array.isArray(out.content)) {
    const blocks = contentBlocksOf(out.content);
    const text = blocks.filter((block) => block.type === 'text').map((block) => block.text);
    out.content = text.length > 0 ? text.join('') : null;
    if (!strict && blocks.some((block) => block.type === 'thinking')) out.content_blocks = blocks;
  }
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

/**
 * Mistral's content blocks as the gateway's: `{type: 'text', text}` as it is, `{type: 'thinking', thinking:
 * [text parts]}` as one thinking block of their text. Other blocks (references, images) have no place in a
 * chat answer's text and are left out.
 */
function contentBlocksOf(content: unknown[]): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  for (const block of content) {
    if (!isObject(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string')
      blocks.push({ type: 'text', text: block.text });
    else if (block.type === 'thinking')
      blocks.push({ type: 'thinking', thinking: thinkingText(block.thinking) });
  }
  return blocks;
}

function thinkingText(parts: unknown): string {
  if (typeof parts === 'string') return parts;
  if (!Array.isArray(parts)) return '';
  let text = '';
  for (const part of parts) if (isObject(part) && typeof part.text === 'string') text += part.text;
  return text;
}

/**
 * For one stream: a delta whose `content` is a list of blocks (Mistral's reasoning models) gets their text
 * as `content`, and their thinking as thinking content-block deltas unless `strict`; a block's index counts
 * the blocks of its choice, a new one at each change between thinking and text. Returns a repaired copy of
 * the chunk, or `undefined` when the chunk needs nothing (one property read per choice).
 */
export function createContentListRepair(
  strict: boolean,
): (chunk: ChatCompletionChunk) => ChatCompletionChunk | undefined {
  // Per choice: the index and kind of the block its last delta was part of.
  const last = new Map<number, { index: number; kind: ContentBlock['type'] }>();
  return (chunk) => {
    let choices: ChatCompletionChunk['choices'] | undefined;
    for (let position = 0; position < chunk.choices.length; position++) {
      const choice = chunk.choices[position]!;
      const content: unknown = (choice as { delta?: { content?: unknown } } | null)?.delta?.content;
      if (!Array.isArray(content)) continue;
      const choiceIndex = typeof choice.index === 'number' ? choice.index : position;
      const delta: Json = { ...choice.delta };
      let text = '';
      let hasText = false;
      const thinking: Array<{ index: number; delta: ContentBlock }> = [];
      for (const block of contentBlocksOf(content)) {
        const previous = last.get(choiceIndex);
        const index = previous?.kind === block.type ? previous.index : (previous?.index ?? -1) + 1;
        last.set(choiceIndex, { index, kind: block.type });
        if (block.type === 'text') {
          text += block.text;
          hasText = true;
        } else if (!strict && block.thinking) thinking.push({ index, delta: block });
      }
      if (hasText) delta.content = text;
      else delete delta.content;
      if (thinking.length > 0) delta.content_blocks = thinking;
      choices ??= [...chunk.choices];
      choices[position] = { ...choice, delta: delta as ChatCompletionChunk['choices'][number]['delta'] };
    }
    return choices ? { ...chunk, choices } : undefined;
  };
}
