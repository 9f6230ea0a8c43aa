/**
 * A translated call's chat chunks as Anthropic's stream grammar: `message_start` (and a `ping`) before
 * anything else; each run of text, thinking or one tool call as a content block — `content_block_start`,
 * its deltas (`text_delta`, `thinking_delta` / `signature_delta`, `input_json_delta`), `content_block_stop`
 * when the next block starts (one at a time: a tool call begun while the open one's arguments still come is
 * held until they are whole) —; at the end `message_delta` with the stop reason and the usage (the chat
 * stream gives usage last), then `message_stop`. Only the first choice is shown (Messages has one). A
 * refusal (`delta.refusal`) is written as text and ends with the stop reason `refusal`. Reasoning a provider
 * streams in a field of its own (`reasoning_content`, `reasoning`) is a thinking block, without signature.
 * Thinking is shown only to a request that asked for it (`thinkingDisplay`); else it is skipped, and the
 * blocks that are shown are numbered without it. With `display: "omitted"` its blocks carry no text (no
 * `thinking_delta`), only their signature.
 */
import type {
  MessagesAnswerBlock,
  MessagesBlockDelta,
  MessagesStreamEvent,
} from '../../core/messages-types.js';
import type { ChatCompletionChunk, FinishReason, Usage } from '../../core/openai-types.js';
import {
  answerStopReason,
  matchedStopSequence,
  messageDeltaUsage,
  messageId,
  messagesUsage,
  type ThinkingDisplay,
} from './chat-to-message.js';
import { reasoningText } from '../../core/reasoning-text.js';

/** The source index of thinking that came as a delta's `reasoning_content` / `reasoning`, not a block. */
const REASONING_FIELD = -1;

/** The block being written: its kind, its Messages index, and the chat index it comes from (a tool call's,
 * or a thinking block's among `content_blocks`). */
type OpenBlock = { kind: 'text' | 'thinking' | 'tool'; index: number; sourceIndex?: number };

/** A tool call not yet written: what of it has come. */
interface HeldCall {
  id: string | undefined;
  name: string | undefined;
  args: string;
}

/** Whether a call's arguments are whole: JSON text followed by anything but blanks is no longer JSON, so a
 * call whose arguments parse gets no more of them. */
function wholeArguments(args: string): boolean {
  try {
    JSON.parse(args);
    return true;
  } catch {
    return false;
  }
}

export function sse(event: MessagesStreamEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

export class ChatChunksToMessageEvents {
  private started = false;
  private open: OpenBlock | undefined;
  private nextIndex = 0;
  /** Tool calls by their chat index → their block index. */
  private readonly toolBlocks = new Map<number, number>();
  /**
   * The calls that began while the tool block open had its arguments still coming, by chat index, in the
   * order they began. A chat stream tells each call's deltas by its index and may send one call's arguments
   * after the next call began, while Anthropic's blocks come one at a time, each stopped whole (clients hand
   * a block on at its content_block_stop). A held call is written once the open one is whole, or when the
   * run of tool calls ends.
   */
  private readonly held = new Map<number, HeldCall>();
  /** The arguments the open tool block has had. */
  private openArgs = '';
  private finishReason: FinishReason | null = null;
  /** The stop string the provider says the answer ended on (on the chunk that finishes it). */
  private stopSequence: string | null = null;
  private refused = false;
  private usage: Usage | undefined;

  /**
   * `display`: how the request asked for thinking to be shown (`thinkingDisplay`). `resumed`: the chunks
   * go on a Message the client already has from another target (a native stream that broke before its
   * end): no `message_start`, and their text joins the text block left open, if any.
   */
  constructor(
    private readonly display: ThinkingDisplay,
    resumed?: { openText: number | undefined; nextIndex: number },
  ) {
    if (!resumed) return;
    this.started = true;
    this.nextIndex = resumed.nextIndex;
    if (resumed.openText !== undefined) this.open = { kind: 'text', index: resumed.openText };
  }

  /** The events of one chunk, framed. */
  push(chunk: ChatCompletionChunk): string {
    let out = this.start(chunk);
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices.find((c) => c.index === 0);
    if (!choice) return out;
    const { delta } = choice;
    if (this.display !== 'none') out += this.thinkingOf(delta);
    for (const text of [delta.content, delta.refusal]) {
      if (typeof text !== 'string' || text === '') continue;
      if (this.open?.kind !== 'text') out += this.openBlock('text', { type: 'text', text: '' });
      out += this.delta({ type: 'text_delta', text });
    }
    if (typeof delta.refusal === 'string' && delta.refusal !== '') this.refused = true;
    for (const call of delta.tool_calls ?? []) {
      out += this.toolCallDelta(call.index, call.id, call.function?.name, call.function?.arguments ?? '');
    }
    if (choice.finish_reason) {
      this.finishReason = choice.finish_reason;
      this.stopSequence = matchedStopSequence(choice);
    }
    return out;
  }

  /** The end of a complete stream. */
  end(): string {
    let out = this.start(undefined);
    out += this.closeBlock();
    const usage = messageDeltaUsage(messagesUsage(this.usage));
    const stopReason = answerStopReason(
      this.finishReason,
      this.toolBlocks.size > 0,
      this.refused,
      this.stopSequence,
    );
    out += sse({
      type: 'message_delta',
      delta: {
        stop_reason: stopReason,
        stop_sequence: stopReason === 'stop_sequence' ? this.stopSequence : null,
      },
      usage,
    });
    return out + sse({ type: 'message_stop' });
  }

  /** One tool call's delta: into its open block, into what is held of it, or a new call's block. */
  private toolCallDelta(
    chatIndex: number,
    id: string | undefined,
    name: string | undefined,
    args: string,
  ): string {
    const held = this.held.get(chatIndex);
    if (held) {
      held.args += args;
      return '';
    }
    if (this.open?.kind === 'tool' && this.open.sourceIndex === chatIndex) {
      return this.inputDelta(args) + this.writeHeldOnceWhole();
    }
    const written = this.toolBlocks.get(chatIndex);
    if (written !== undefined) {
      // More of a call already whole (which no provider sends): on its own block still.
      return args ? sse(inputJsonDelta(written, args)) : '';
    }
    if (this.open?.kind === 'tool' && !wholeArguments(this.openArgs)) {
      this.held.set(chatIndex, { id, name, args });
      return '';
    }
    return this.closeBlock() + this.startTool(chatIndex, { id, name, args });
  }

  /** While the open tool block's arguments are whole, the next held call takes its place. */
  private writeHeldOnceWhole(): string {
    let out = '';
    for (const [chatIndex, call] of this.held) {
      if (!wholeArguments(this.openArgs)) break;
      this.held.delete(chatIndex);
      out += this.stopOpen() + this.startTool(chatIndex, call);
    }
    return out;
  }

  /** A tool_use block, opened with what has come of its call. */
  private startTool(chatIndex: number, call: HeldCall): string {
    const index = this.nextIndex++;
    this.open = { kind: 'tool', index, sourceIndex: chatIndex };
    this.toolBlocks.set(chatIndex, index);
    this.openArgs = '';
    const block = {
      type: 'tool_use' as const,
      id: call.id ?? `toolu_${chatIndex}`,
      name: call.name ?? '',
      input: {},
    };
    return sse({ type: 'content_block_start', index, content_block: block }) + this.inputDelta(call.args);
  }

  private inputDelta(args: string): string {
    if (!args) return '';
    this.openArgs += args;
    return sse(inputJsonDelta((this.open as OpenBlock).index, args));
  }

  /** `message_start` and a ping, once. The hooks' results, carried by the first chunk, go with it (as on a
   * native stream). */
  private start(chunk: (ChatCompletionChunk & { hook_results?: unknown }) | undefined): string {
    if (this.started) return '';
    this.started = true;
    const hookResults = chunk?.hook_results;
    const start = sse({
      ...(hookResults !== undefined ? { hook_results: hookResults } : {}),
      type: 'message_start',
      message: {
        id: messageId(chunk?.id ?? 'gateway'),
        type: 'message',
        role: 'assistant',
        model: chunk?.model ?? '',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        // Anthropic's fields, as its message_start has them: the chat stream gives usage last, unless the
        // provider reports it from its first chunk; message_delta gives the counts.
        usage: messagesUsage(chunk?.usage),
      },
    });
    return start + sse({ type: 'ping' });
  }

  /** The thinking of a delta: from its `content_blocks`, else from its reasoning field. */
  private thinkingOf(delta: ChatCompletionChunk['choices'][number]['delta']): string {
    let out = '';
    for (const { index: sourceIndex, delta: block } of delta.content_blocks ?? []) {
      if (block.type === 'redacted_thinking') {
        out += this.openBlock('thinking', { type: 'redacted_thinking', data: block.data ?? '' }, sourceIndex);
        out += this.closeBlock();
      } else if (block.type === 'thinking') {
        out += this.thinkingDelta(sourceIndex, block.thinking, block.signature);
      }
    }
    const reasoning = delta.content_blocks ? undefined : reasoningText(delta);
    if (reasoning !== undefined) out += this.thinkingDelta(REASONING_FIELD, reasoning, undefined);
    return out;
  }

  /** A thinking delta, in the thinking block of its source (opened when another block is). */
  private thinkingDelta(
    sourceIndex: number,
    text: string | undefined,
    signature: string | undefined,
  ): string {
    let out = '';
    if (this.open?.kind !== 'thinking' || this.open.sourceIndex !== sourceIndex) {
      out += this.openBlock('thinking', { type: 'thinking', thinking: '', signature: '' }, sourceIndex);
    }
    // Omitted: the block and its signature only, as Anthropic streams it.
    if (text && this.display !== 'omitted') out += this.delta({ type: 'thinking_delta', thinking: text });
    if (signature) out += this.delta({ type: 'signature_delta', signature });
    return out;
  }

  private openBlock(kind: 'text' | 'thinking', block: MessagesAnswerBlock, sourceIndex?: number): string {
    const out = this.closeBlock();
    const index = this.nextIndex++;
    this.open = { kind, index, sourceIndex };
    return out + sse({ type: 'content_block_start', index, content_block: block });
  }

  /** Stops the open block, and writes the calls held, each whole: the run of tool calls has ended. */
  private closeBlock(): string {
    let out = this.stopOpen();
    for (const [chatIndex, call] of this.held) {
      this.held.delete(chatIndex);
      out += this.startTool(chatIndex, call) + this.stopOpen();
    }
    return out;
  }

  private stopOpen(): string {
    if (!this.open) return '';
    const { index } = this.open;
    this.open = undefined;
    return sse({ type: 'content_block_stop', index });
  }

  private delta(delta: MessagesBlockDelta): string {
    return sse({ type: 'content_block_delta', index: (this.open as OpenBlock).index, delta });
  }
}

function inputJsonDelta(index: number, partialJson: string): MessagesStreamEvent {
  return {
    type: 'content_block_delta',
    index,
    delta: { type: 'input_json_delta', partial_json: partialJson },
  };
}
