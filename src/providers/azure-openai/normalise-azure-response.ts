/**
 * Azure's answers are OpenAI's shape with additions and lapses: content-filter verdicts
 * (`prompt_filter_results`, `content_filter_results`), hosted models' `reasoning_content` and
 * `matched_stop`, nulls where OpenAI omits a field (`system_fingerprint`, `role`, `tool_calls`,
 * `prompt_tokens_details`), missing `logprobs`/`refusal`, and `reasoning_tokens` at the top of usage.
 * This makes them valid OpenAI objects. Strict mode keeps OpenAI's fields only; otherwise Azure's extras
 * stay and the reasoning is offered as a thinking content block.
 */
import type { ChatCompletionChunk, ContentBlock } from '../../core/openai-types.js';

type Json = Record<string, unknown>;

const COMPLETION_FIELDS = [
  'id',
  'object',
  'created',
  'model',
  'system_fingerprint',
  'service_tier',
  'choices',
  'usage',
];
const CHOICE_FIELDS = ['index', 'message', 'delta', 'text', 'finish_reason', 'logprobs'];
const MESSAGE_FIELDS = ['role', 'content', 'refusal', 'tool_calls', 'function_call', 'annotations', 'audio'];
const DELTA_FIELDS = ['role', 'content', 'refusal', 'tool_calls', 'function_call'];
const USAGE_FIELDS = [
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'prompt_tokens_details',
  'completion_tokens_details',
];

/** A normalised copy of a chat completion or text completion; the input is not changed. */
export function normaliseAzureResponse(body: unknown, strict: boolean): unknown {
  if (!isObject(body) || !Array.isArray(body.choices)) return body;
  const out = topLevel(body, strict);
  out.choices = body.choices.map((choice: unknown) => {
    if (!isObject(choice)) return choice;
    const cleaned = fields(choice, strict ? CHOICE_FIELDS : undefined);
    if (isObject(choice.message)) cleaned.message = message(choice.message, strict);
    if (!('logprobs' in cleaned)) cleaned.logprobs = null;
    return cleaned;
  });
  return out;
}

/** A normalised copy of a stream chunk. */
export function normaliseAzureChunk(chunk: ChatCompletionChunk, strict: boolean): ChatCompletionChunk {
  const raw = chunk as unknown as Json;
  const out = topLevel(raw, strict);
  out.choices = chunk.choices.map((choice) => {
    const cleaned = fields(choice as unknown as Json, strict ? CHOICE_FIELDS : undefined);
    if (isObject(choice.delta)) cleaned.delta = delta(choice.delta, strict);
    return cleaned;
  });
  return out as unknown as ChatCompletionChunk;
}

function topLevel(body: Json, strict: boolean): Json {
  const out = withoutNulls(fields(body, strict ? COMPLETION_FIELDS : undefined), [
    'system_fingerprint',
    'prompt_filter_results',
    'usage',
  ]);
  // `usage: null` is what OpenAI sends on chunks before the last one; keep it there.
  if (body.usage === null && body.object === 'chat.completion.chunk') out.usage = null;
  if (isObject(body.usage)) out.usage = usage(body.usage, strict);
  return out;
}

function message(value: Json, strict: boolean): Json {
  const out = withoutNulls(fields(value, strict ? MESSAGE_FIELDS : undefined), [
    'tool_calls',
    'function_call',
    'reasoning_content',
  ]);
  if (!('refusal' in out)) out.refusal = null;
  delete out.reasoning_content;
  const reasoning = value.reasoning_content;
  if (!strict && typeof reasoning === 'string' && reasoning !== '') {
    const blocks: ContentBlock[] = [{ type: 'thinking', thinking: reasoning }];
    if (typeof out.content === 'string' && out.content !== '')
      blocks.push({ type: 'text', text: out.content });
    out.content_blocks = blocks;
  }
  return out;
}

function delta(value: Json, strict: boolean): Json {
  const out = withoutNulls(fields(value, strict ? DELTA_FIELDS : undefined), [
    'role',
    'tool_calls',
    'function_call',
    'reasoning_content',
  ]);
  delete out.reasoning_content;
  const reasoning = value.reasoning_content;
  if (!strict && typeof reasoning === 'string' && reasoning !== '') {
    out.content_blocks = [{ index: 0, delta: { type: 'thinking', thinking: reasoning } }];
  }
  return out;
}

function usage(value: Json, strict: boolean): Json {
  const out: Json = {};
  for (const [key, field] of Object.entries(value)) {
    if (field === null || (strict && !USAGE_FIELDS.includes(key))) continue;
    out[key] = field;
  }
  // Some hosted models report reasoning at the top of usage; OpenAI puts it in completion_tokens_details.
  if (typeof value.reasoning_tokens === 'number') {
    delete out.reasoning_tokens;
    const details = isObject(out.completion_tokens_details) ? out.completion_tokens_details : {};
    if (details.reasoning_tokens === undefined) {
      out.completion_tokens_details = { ...details, reasoning_tokens: value.reasoning_tokens };
    }
  }
  return out;
}

function fields(value: Json, keep: readonly string[] | undefined): Json {
  if (!keep) return { ...value };
  const out: Json = {};
  for (const key of keep) if (key in value) out[key] = value[key];
  return out;
}

function withoutNulls(value: Json, keys: readonly string[]): Json {
  for (const key of keys) if (value[key] === null) delete value[key];
  return value;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
