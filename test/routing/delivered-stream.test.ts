/**
 * DeliveredStream keeps the text the client has, for a continuation on another target, only up to its
 * bound: past it the stream still goes on to the client whole, but is no longer continuable.
 */
import { describe, expect, it } from 'vitest';
import type { MessagesStreamEvent } from '../../src/core/messages-types.js';
import { DeliveredStream } from '../../src/gateway/delivered-stream.js';
import { BufferSink, type AnswerChunk } from '../../src/gateway/sink.js';

const chatChunk = (content: string): AnswerChunk =>
  ({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1770000000,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, delta: { content }, finish_reason: null }],
  }) as AnswerChunk;

const textDelta = (text: string): AnswerChunk =>
  ({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }) as MessagesStreamEvent;

describe('DeliveredStream', () => {
  it('keeps a chat stream within the bound, continuable', () => {
    const delivered = new DeliveredStream(new BufferSink(), 100);
    for (let i = 0; i < 10; i++) void delivered.chunk(chatChunk('0123456789'), undefined);
    expect(delivered.text.get(0)).toHaveLength(100);
    expect(delivered.continuable).toBe(true);
  });

  it('stops keeping a chat stream past the bound, and no longer continues it, but passes it all on', async () => {
    const buffer = new BufferSink();
    const delivered = new DeliveredStream(buffer, 100);
    for (let i = 0; i < 1000; i++) void delivered.chunk(chatChunk('0123456789'), undefined);
    delivered.end();
    expect(delivered.text.get(0)).toHaveLength(100);
    expect(delivered.continuable).toBe(false);
    const result = await buffer.result;
    expect(result.kind === 'stream' && result.chunks).toHaveLength(1000);
  });

  it('bounds a relayed Messages stream the same way', () => {
    const delivered = new DeliveredStream(new BufferSink(), 100);
    void delivered.chunk(
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'text', text: '' },
      } as MessagesStreamEvent,
      undefined,
    );
    for (let i = 0; i < 1000; i++) void delivered.chunk(textDelta('0123456789'), undefined);
    expect(delivered.text.get(0)!.length).toBeLessThanOrEqual(100);
    expect(delivered.continuable).toBe(false);
  });
});
