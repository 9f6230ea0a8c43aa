/**
 * A chat completion (a translated call's answer) as an Anthropic Message: thinking (`content_blocks`, or the
 * provider's `reasoning_content` / `reasoning`) first when the request enabled thinking, then the text,
 * then each tool call as a `tool_use` block; the finish reason as a stop reason; usage in Anthropic's terms
 * (cache reads and writes apart from `input_tokens`). An OpenAI refusal (`message.refusal`, what a model
 * that declines answers instead of content) is Anthropic's `refusal` stop reason, its text kept as a text
 * block. A stop sequence is named where the provider says which stop matched (`matchedStopSequence`).
 */
import type {
  MessagesAnswer,
  MessagesAnswerBlock,
  MessagesStopReason,
  MessagesUsage,
} from '../../core/messages-types.js';
import type { MessagesRequest } from '../../core/schemas/messages-request.js';
import type { ChatCompletion, FinishReason, Usage } from '../../core/openai-types.js';
import { reasoningText } from '../../core/reasoning-text.js';

export function messagesStopReason(reason: FinishReason | null): MessagesStopReason {
  switch (reason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    case null:
      return null;
    default:
      return 'end_turn';
  }
}

/**
 * The stop string a choice ended on, where the provider says which: vLLM's `stop_reason` (the matched stop
 * string; a stop token's id is a number, the end-of-sequence token null) and SGLang's `matched_stop`.
 * OpenAI's finish reason `stop` is the same for a stop sequence and a natural end, and says nothing more:
 * such an answer is `end_turn`, its `stop_sequence` null.
 */
export function matchedStopSequence(choice: object | undefined): string | null {
  const { stop_reason: vllm, matched_stop: sglang } = (choice ?? {}) as {
    stop_reason?: unknown;
    matched_stop?: unknown;
  };
  if (typeof vllm === 'string' && vllm !== '') return vllm;
  return typeof sglang === 'string' && sglang !== '' ? sglang : null;
}

/**
 * The stop reason of a whole answer: `refusal` for a refusal; `tool_use` for an answer with tool calls
 * that the provider says simply stopped (OpenAI's finish reason for a call forced by name is `stop`, as is
 * some OpenAI-wire servers' for every call), as Anthropic's answer with tool_use blocks stops for them;
 * `stop_sequence` for one that stopped on a stop string the provider named; else the finish reason's
 * (`end_turn` when there is none).
 */
export function answerStopReason(
  reason: FinishReason | null,
  toolUse: boolean,
  refused: boolean,
  stopSequence: string | null = null,
): MessagesStopReason {
  if (refused) return 'refusal';
  const stop = messagesStopReason(reason) ?? 'end_turn';
  if (stop !== 'end_turn') return stop;
  return toolUse ? 'tool_use' : stopSequence !== null ? 'stop_sequence' : stop;
}

/** Chat usage in Anthropic's terms: `prompt_tokens` is the whole prompt, `input_tokens` what was neither
 * read from the prompt cache nor written to it. A provider that breaks its prompt down
 * (`prompt_tokens_details`) gives its writes there when it wrote any (Bedrock's and Anthropic's chat leave
 * 0 writes out): its writes are then 0, as Anthropic answers them; null only when it gives no breakdown.
 * The writes are also broken down by how long they are kept (`cache_creation`): those the provider says
 * are kept an hour (`cache_write_1h_tokens`, not OpenAI's), the rest the default five minutes; null, as
 * Anthropic's types allow, when the writes are not known — the provider gives no breakdown, or a stream's
 * message_start comes before the usage. The SDK's stream helper takes `cache_creation` from message_start
 * alone: a breakdown of 0 writes there would stand in its Message beside the writes counted at the end. */
export function messagesUsage(usage: Usage | null | undefined): MessagesUsage {
  const details = usage?.prompt_tokens_details;
  const cached = details?.cached_tokens ?? 0;
  const written = details ? (details.cache_write_tokens ?? 0) : null;
  return {
    input_tokens: Math.max(0, (usage?.prompt_tokens ?? 0) - cached - (written ?? 0)),
    output_tokens: usage?.completion_tokens ?? 0,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: cached,
    cache_creation: written === null ? null : cacheCreation(written, details?.cache_write_1h_tokens ?? 0),
  };
}

/**
 * The usage of a stream's `message_delta`, as Anthropic's is (its `MessageDeltaUsage`, and its recorded
 * streams): the cumulative counts, in its order, without the writes' breakdown by TTL (`cache_creation`),
 * which Anthropic gives in `message_start` alone and the SDK's stream helper reads from there alone.
 */
export function messageDeltaUsage(usage: MessagesUsage): MessagesUsage {
  return {
    input_tokens: usage.input_tokens,
    cache_creation_input_tokens: usage.cache_creation_input_tokens,
    cache_read_input_tokens: usage.cache_read_input_tokens,
    output_tokens: usage.output_tokens,
  };
}

function cacheCreation(written: number, hour: number): NonNullable<MessagesUsage['cache_creation']> {
  const kept = Math.min(hour, written);
  return { ephemeral_5m_input_tokens: written - kept, ephemeral_1h_input_tokens: kept };
}

/** A chat id as a Message id (`msg_…`). */
export function messageId(chatId: string): string {
  return `msg_${chatId.replace(/^chatcmpl-/, '')}`;
}

/** Tool arguments as the input object; arguments that are not a JSON object are kept under `_raw`. */
export function toolInput(args: string): unknown {
  if (args.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(args);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : { _raw: args };
  } catch {
    return { _raw: args };
  }
}

/**
 * How a Messages request's answer shows thinking. Anthropic answers thinking blocks only when the request
 * enabled thinking (`enabled` with a budget, or `adaptive`), and clients of a request without it read the
 * text as the first block (`none`). A translated provider may reason all the same (DeepSeek's reasoner, Groq's
 * and Bedrock's reasoning models, Gemini's thought signatures): that reasoning is then left out of the
 * answer, though its tokens count in `output_tokens` as they were spent. With `display: "omitted"` the blocks
 * are there but their text is empty, the signature alone carrying the thinking (`omitted`); else `full`.
 */
export type ThinkingDisplay = 'none' | 'full' | 'omitted';

export function thinkingDisplay(request: Pick<MessagesRequest, 'thinking'> | undefined): ThinkingDisplay {
  const type = request?.thinking?.type;
  if (type !== 'enabled' && type !== 'adaptive') return 'none';
  return request?.thinking?.display === 'omitted' ? 'omitted' : 'full';
}

/** The thinking blocks of a chat answer: from its `content_blocks`, else from its reasoning field. */
function thinkingBlocks(
  message: ChatCompletion['choices'][number]['message'] | undefined,
  display: ThinkingDisplay,
): MessagesAnswerBlock[] {
  const blocks: MessagesAnswerBlock[] = [];
  const shown = (text: string | undefined): string => (display === 'omitted' ? '' : (text ?? ''));
  for (const block of message?.content_blocks ?? []) {
    if (block.type === 'thinking') {
      blocks.push({ type: 'thinking', thinking: shown(block.thinking), signature: block.signature ?? '' });
    } else if (block.type === 'redacted_thinking') {
      blocks.push({ type: 'redacted_thinking', data: block.data ?? '' });
    }
  }
  const reasoning = blocks.length === 0 ? reasoningText(message) : undefined;
  // Such reasoning has no signature: only a provider's own thinking is signed.
  if (reasoning !== undefined) blocks.push({ type: 'thinking', thinking: shown(reasoning), signature: '' });
  return blocks;
}

/**
 * The Message of a chat answer; the hooks' `hook_results`, when the answer carries them, go with it.
 * `display`: how the request asked for thinking to be shown (`thinkingDisplay`).
 */
export function chatToMessage(
  completion: ChatCompletion & { hook_results?: unknown },
  display: ThinkingDisplay,
): MessagesAnswer {
  const choice = completion.choices[0];
  const content = display === 'none' ? [] : thinkingBlocks(choice?.message, display);
  if (choice?.message.content) content.push({ type: 'text', text: choice.message.content });
  const refusal = choice?.message.refusal;
  if (refusal) content.push({ type: 'text', text: refusal });
  for (const call of choice?.message.tool_calls ?? []) {
    content.push({
      type: 'tool_use',
      id: call.id,
      name: call.function.name,
      input: toolInput(call.function.arguments),
    });
  }
  const matched = matchedStopSequence(choice);
  const stopReason = answerStopReason(
    choice?.finish_reason ?? 'stop',
    (choice?.message.tool_calls?.length ?? 0) > 0,
    Boolean(refusal),
    matched,
  );
  return {
    id: messageId(completion.id),
    type: 'message',
    role: 'assistant',
    model: completion.model,
    content,
    stop_reason: stopReason,
    stop_sequence: stopReason === 'stop_sequence' ? matched : null,
    usage: messagesUsage(completion.usage),
    ...(completion.hook_results !== undefined ? { hook_results: completion.hook_results } : {}),
  };
}
