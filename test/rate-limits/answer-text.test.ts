/**
 * The text of a model call's answer a tokens policy settles an answer without usage to: a whole answer's,
 * and a stream's counted chunk by chunk, in each operation's shape (content, completion text, tool-call
 * arguments; a Message's text and tool input; a Response's output text and function-call arguments).
 */
import { describe, expect, it } from 'vitest';
import { AnswerTextCount, answerTextLength } from '../../src/gateway/rate-limits/answer-text.js';
import { BufferSink, type AnswerChunk } from '../../src/gateway/sink.js';

const counted = (chunks: readonly unknown[]) => {
  const next = new BufferSink();
  const count = new AnswerTextCount(next);
  for (const chunk of chunks) void count.chunk(chunk as AnswerChunk, undefined);
  count.end();
  return { length: count.length, written: next.written };
};

describe('answerTextLength', () => {
  it("counts every choice's content and tool-call arguments of a chat completion", () => {
    const body = {
      object: 'chat.completion',
      choices: [
        { index: 0, message: { role: 'assistant', content: 'abcd' } },
        {
          index: 1,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
          },
        },
      ],
    };
    expect(answerTextLength('chat', body)).toBe(4 + 7);
  });

  it('counts a completion, a Message and a Response; an embedding and a token count have none', () => {
    expect(answerTextLength('completions', { choices: [{ index: 0, text: 'hello' }] })).toBe(5);
    const message = {
      type: 'message',
      content: [
        { type: 'text', text: 'hi there' },
        { type: 'tool_use', id: 't', name: 'f', input: { city: 'Paris' } },
      ],
    };
    expect(answerTextLength('messages', message)).toBe(8 + 5);
    const response = {
      object: 'response',
      output: [
        { type: 'message', content: [{ type: 'output_text', text: 'yes' }] },
        { type: 'function_call', name: 'f', arguments: '{}' },
      ],
    };
    expect(answerTextLength('responses', response)).toBe(3 + 2);
    expect(answerTextLength('embeddings', { data: [{ embedding: [0.1, 0.2] }] })).toBe(0);
    expect(answerTextLength('count_tokens', { input_tokens: 12 })).toBe(0);
    expect(answerTextLength('chat', undefined)).toBe(0);
  });
});

describe('AnswerTextCount', () => {
  it("counts a chat stream's content and tool-call arguments, and passes every chunk on", () => {
    const chunk = (delta: object) => ({ object: 'chat.completion.chunk', choices: [{ index: 0, delta }] });
    const { length, written } = counted([
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'abc' }),
      chunk({ tool_calls: [{ index: 0, function: { name: 'f', arguments: '{"a"' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }),
      { object: 'text_completion', choices: [{ index: 0, text: 'xy' }] },
    ]);
    expect(length).toBe(3 + 4 + 3 + 2);
    expect(written).toBe(5);
  });

  it("counts a Messages stream's text and tool input, and a Responses stream's text and arguments", () => {
    const { length } = counted([
      { type: 'message_start', message: { type: 'message', content: [] } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hello' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"c":' } },
      { type: 'response.output_text.delta', delta: 'abc' },
      { type: 'response.function_call_arguments.delta', delta: '{}' },
      { type: 'response.completed', response: {} },
    ]);
    expect(length).toBe(5 + 5 + 3 + 2);
  });
});
