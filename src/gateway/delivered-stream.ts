/**
 * A streamed answer as the consumer has it so far: the text of each choice, the stream's identity, and
 * whether anything but plain text went out. A stream that breaks after its first chunk is continued on the
 * next target from exactly this (routing/continuation.ts); a tool call or a second choice cannot be, so
 * such an answer then ends with the in-band error.
 *
 * The text is kept up to `maxChars` characters over all choices (GATEWAY_STREAM_CONTINUATION_MAX_CHARS):
 * a stream may go on for as long as its provider sends, and what the gateway holds of it must not. Past
 * the bound no more text is kept (the call's record has what was) and the answer can no longer be
 * continued elsewhere: it too ends with the in-band error if it breaks.
 */
import type { MessagesStreamEvent } from '../core/messages-types.js';
import type { ResponsesStreamEvent } from '../core/responses-types.js';
import { eventText, visitChunkText, type ChunkTextKind } from './chunk-text.js';
import { ForwardingSink, type AnswerChunk, type CallSink } from './sink.js';

/** What every chunk of the client's stream shares; a continuation on another target keeps it. */
export interface StreamIdentity {
  id: string;
  created: number;
  object: string;
}

export class DeliveredStream extends ForwardingSink {
  /** Text delivered so far per choice index. */
  readonly text = new Map<number, string>();
  /** The id, created and object of the first chunk delivered. */
  identity: StreamIdentity | undefined;
  /** false once anything but text went out (tool calls, several choices). */
  continuable = true;
  /** performance.now() when the first chunk went out (with the answer's headers). */
  firstChunkAt: number | undefined;
  /** The content blocks a relayed Messages stream has opened. */
  private blocks = 0;
  /** Characters of text seen so far, kept or not. */
  private chars = 0;

  constructor(
    next: CallSink,
    private readonly maxChars: number,
  ) {
    super(next);
  }

  override chunk(chunk: AnswerChunk, raw: string | undefined): Promise<void> | undefined {
    const before = this.next.written;
    const pending = this.next.chunk(chunk, raw);
    if (this.next.written > before) {
      this.firstChunkAt ??= performance.now();
      this.note(chunk);
    }
    return pending;
  }

  private continuesAsText(chunk: MessagesStreamEvent | ResponsesStreamEvent): boolean {
    const ok = this.continuable && textOnlyEvent(chunk, this.blocks);
    if (chunk.type === 'content_block_start') this.blocks++;
    return ok;
  }

  private note(chunk: AnswerChunk): void {
    if (!('choices' in chunk)) {
      // An Anthropic Messages or Responses event relayed as it came. Its text is noted, for the call's
      // record and for a continuation: a Messages stream that has opened nothing but one text block can
      // be continued inside it (ingress/messages-codec.ts); anything else cannot be continued elsewhere.
      if (!this.continuesAsText(chunk)) this.continuable = false;
      visitChunkText(chunk, this.keepContent);
      return;
    }
    if (!this.identity && typeof chunk.id === 'string') {
      this.identity = { id: chunk.id, created: chunk.created, object: chunk.object };
    }
    for (const choice of chunk.choices) {
      if (choice.index !== 0) this.continuable = false;
      const delta = (choice as { delta?: Record<string, unknown> }).delta;
      if (delta && (delta.tool_calls || delta.function_call)) this.continuable = false;
    }
    visitChunkText(chunk, this.keepContent);
  }

  /** Keeps a choice's content (chunk-text.ts); tool text is not kept, and only ends continuability above. */
  private readonly keepContent = (index: number, text: string, kind: ChunkTextKind): void => {
    if (kind === 'content' && text.length > 0) this.keep(index, text);
  };

  /** Adds a choice's text while the whole is within the bound; past it, the answer is not continuable. */
  private keep(index: number, text: string): void {
    this.chars += text.length;
    if (this.chars > this.maxChars) {
      this.continuable = false;
      return;
    }
    this.text.set(index, (this.text.get(index) ?? '') + text);
  }
}

/** Whether a relayed Messages event leaves the stream one another target can finish: the message's
 * start, pings, and the start and text deltas of its first and only block, a text block. */
function textOnlyEvent(chunk: MessagesStreamEvent | ResponsesStreamEvent, blocks: number): boolean {
  switch (chunk.type) {
    case 'message_start':
    case 'ping':
      return true;
    case 'content_block_start': {
      const block = (chunk as Extract<MessagesStreamEvent, { type: 'content_block_start' }>).content_block;
      return blocks === 0 && block.type === 'text' && block.text === '' && !('citations' in block);
    }
    case 'content_block_delta':
      return eventText(chunk) !== undefined;
    default:
      return false;
  }
}
