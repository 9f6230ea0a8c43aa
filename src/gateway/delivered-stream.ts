/**
 * A streamed answer as the consumer has it so far: the text of each choice, the stream's identity, and
 * whether anything but plain text went out. A stream that breaks after its first chunk is continued on the
 * next target from exactly this (routing/continuation.ts); a tool call or a second choice cannot be, so
 * such an answer then ends with the in-band error.
 */
import type { MessagesStreamEvent } from '../core/messages-types.js';
import type { ResponsesStreamEvent } from '../core/responses-types.js';
import { ForwardingSink, type AnswerChunk } from './sink.js';

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
      const text = eventText(chunk);
      if (text !== undefined) this.text.set(0, (this.text.get(0) ?? '') + text);
      return;
    }
    if (!this.identity && typeof chunk.id === 'string') {
      this.identity = { id: chunk.id, created: chunk.created, object: chunk.object };
    }
    for (const choice of chunk.choices) {
      if (choice.index !== 0) this.continuable = false;
      const delta = (choice as { delta?: Record<string, unknown> }).delta;
      const content = delta ? delta.content : (choice as { text?: unknown }).text;
      if (typeof content === 'string' && content.length > 0) {
        this.text.set(choice.index, (this.text.get(choice.index) ?? '') + content);
      }
      if (delta && (delta.tool_calls || delta.function_call)) this.continuable = false;
    }
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

/** The answer text an Anthropic Messages or Responses event carries. */
export function eventText(chunk: MessagesStreamEvent | ResponsesStreamEvent): string | undefined {
  if (chunk.type === 'content_block_delta') {
    const delta = (chunk as Extract<MessagesStreamEvent, { type: 'content_block_delta' }>).delta;
    return delta.type === 'text_delta' ? delta.text : undefined;
  }
  if (chunk.type === 'response.output_text.delta') {
    const delta = (chunk as ResponsesStreamEvent).delta;
    return typeof delta === 'string' ? delta : undefined;
  }
  return undefined;
}
