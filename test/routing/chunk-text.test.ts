/**
 * The one reading of a stream chunk's text that the delivered stream (each choice's content, kept) and a
 * tokens policy's estimate (every piece, counted) share: an OpenAI chunk's content and tool-call
 * arguments by choice, a Messages or Responses event's text and tool input.
 */
import { describe, expect, it } from 'vitest';
import { visitChunkText, type ChunkTextKind } from '../../src/gateway/chunk-text.js';
import type { AnswerChunk } from '../../src/gateway/sink.js';

const pieces = (chunk: unknown) => {
  const seen: Array<[number, string, ChunkTextKind]> = [];
  visitChunkText(chunk as AnswerChunk, (index, text, kind) => seen.push([index, text, kind]));
  return seen;
};

describe('visitChunkText', () => {
  it("reads a chat chunk's content and tool-call arguments by choice", () => {
    const chunk = {
      object: 'chat.completion.chunk',
      choices: [
        { index: 0, delta: { role: 'assistant', content: 'abc' } },
        {
          index: 1,
          delta: {
            tool_calls: [
              { index: 0, function: { name: 'f', arguments: '{"a"' } },
              { index: 1, function: { name: 'g' } },
            ],
          },
        },
      ],
    };
    expect(pieces(chunk)).toEqual([
      [0, 'abc', 'content'],
      [1, '{"a"', 'tool'],
    ]);
  });

  it("reads a completion choice's text, and a chat choice's delta only when it has one", () => {
    expect(pieces({ object: 'text_completion', choices: [{ index: 2, text: 'xy' }] })).toEqual([
      [2, 'xy', 'content'],
    ]);
    // Both a delta and a text: the delta is the chunk's (a chat chunk), not counted twice.
    expect(pieces({ choices: [{ index: 0, delta: { content: 'ab' }, text: 'ab' }] })).toEqual([
      [0, 'ab', 'content'],
    ]);
    expect(pieces({ choices: [{ index: 0, delta: { content: null } }] })).toEqual([]);
  });

  it("reads a Messages event's text and tool input, a Responses event's text and arguments", () => {
    expect(
      pieces({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hello' } }),
    ).toEqual([[0, 'hello', 'content']]);
    expect(
      pieces({
        type: 'content_block_delta',
        index: 1,
        delta: { type: 'input_json_delta', partial_json: '{"c":' },
      }),
    ).toEqual([[0, '{"c":', 'tool']]);
    expect(pieces({ type: 'response.output_text.delta', delta: 'abc' })).toEqual([[0, 'abc', 'content']]);
    expect(pieces({ type: 'response.function_call_arguments.delta', delta: '{}' })).toEqual([
      [0, '{}', 'tool'],
    ]);
    expect(pieces({ type: 'message_start', message: { type: 'message', content: [] } })).toEqual([]);
    expect(pieces({ type: 'response.completed', response: {} })).toEqual([]);
  });
});
