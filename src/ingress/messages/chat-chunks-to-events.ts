/**
 * A translated call's chat chunks as Anthropic's stream grammar: `message_start` (and a `ping`) before
 * anything else; each run of text, thinking or one tool call as a content block — `content_block_start`,
 * its deltas (`text_delta`, `thinking_delta` / `signature_delta`, `input_json_delta`), `content_block_stop`
 * when the next block starts —; at the end `message_delta` with the stop reason and the usage (the chat
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

export function sse(event: MessagesStreamEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

export class ChatChunksToMessageEvents {
  private started = false;
  private open: OpenBlock | undefined;
  private nextIndex = 0;
  /** Tool calls by their chat index → their block index. */
  private readonly toolBlocks = new Map<number, number>();
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
      if (!this.toolBlocks.has(call.index)) {
        out += this.openBlock(
          'tool',
          {
            type: 'tool_use',
            id: call.id ?? `toolu_${call.index}`,
            name: call.function?.name ?? '',
            input: {},
          },
          call.index,
        );
        this.toolBlocks.set(call.index, this.nextIndex - 1);
      }
      const args = call.function?.arguments;
      if (args) {
        const index = this.toolBlocks.get(call.index) as number;
        out += sse({
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: args },
        });
      }
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
    const usage = messagesUsage(this.usage);
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
        usage: { input_tokens: 0, output_tokens: 0 },
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

  private openBlock(kind: OpenBlock['kind'], block: MessagesAnswerBlock, sourceIndex?: number): string {
    const out = this.closeBlock();
    const index = this.nextIndex++;
    this.open = { kind, index, sourceIndex };
    return out + sse({ type: 'content_block_start', index, content_block: block });
  }

  private closeBlock(): string {
    if (!this.open) return '';
    const { index } = this.open;
    this.open = undefined;
    return sse({ type: 'content_block_stop', index });
  }

  private delta(delta: MessagesBlockDelta): string {
    return sse({ type: 'content_block_delta', index: (this.open as OpenBlock).index, delta });
  }
}
