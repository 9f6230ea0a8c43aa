/**
 * The text checks read, drawn from each request type and answer, and the rewrite of every text a mutator
 * makes, which must reach every message, content part, tool call and choice.
 */
import { describe, expect, it } from 'vitest';
import {
  allAnswerTexts,
  allRequestTexts,
  answerText,
  mapAnswerTexts,
  mapRequestTexts,
  requestText,
} from '../../src/hooks/text.js';

const upper = (text: string) => text.toUpperCase();

describe('requestText', () => {
  it('chatComplete: the last message, a string or its text parts joined by a newline', () => {
    expect(
      requestText('chatComplete', {
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'hello there' },
        ],
      }),
    ).toBe('hello there');
    expect(
      requestText('chatComplete', {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'first' },
              { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
              { type: 'text', text: 'second' },
            ],
          },
        ],
      }),
    ).toBe('first\nsecond');
    expect(requestText('chatComplete', { messages: [{ role: 'assistant', content: null }] })).toBe('');
    expect(requestText('chatComplete', { messages: [] })).toBe('');
    expect(requestText('chatComplete', {})).toBe('');
  });

  it('complete: the prompt, a string or an array of strings; token arrays are not text', () => {
    expect(requestText('complete', { prompt: 'once upon' })).toBe('once upon');
    expect(requestText('complete', { prompt: ['a', 'b'] })).toBe('a\nb');
    expect(requestText('complete', { prompt: [1, 2, 3] })).toBe('');
  });

  it('embed: the input, a string or an array of strings', () => {
    expect(requestText('embed', { input: 'vector me' })).toBe('vector me');
    expect(requestText('embed', { input: ['x', 'y'] })).toBe('x\ny');
    expect(requestText('embed', { input: [[1, 2]] })).toBe('');
  });
});

describe('answerText', () => {
  it('chat: the first choice, completion: the first choice text, embeddings: none', () => {
    const chat = {
      choices: [
        { index: 0, message: { role: 'assistant', content: 'one' } },
        { index: 1, message: { role: 'assistant', content: 'two' } },
      ],
    };
    expect(answerText('chatComplete', chat)).toBe('one');
    expect(answerText('chatComplete', { choices: [{ message: { content: null, tool_calls: [] } }] })).toBe(
      '',
    );
    expect(answerText('complete', { choices: [{ text: 'done' }, { text: 'other' }] })).toBe('done');
    expect(answerText('embed', { data: [{ embedding: [0.1] }] })).toBe('');
    expect(answerText('chatComplete', {})).toBe('');
  });
});

describe('mapRequestTexts', () => {
  it('rewrites every message, every text part and every tool call, leaving the input untouched', () => {
    const body = {
      model: 'm',
      messages: [
        { role: 'system', content: 'sys' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'part' },
            { type: 'image_url', image_url: { url: 'u' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{"a":"arg"}' } }],
        },
        { role: 'tool', tool_call_id: 't', content: 'result' },
        { role: 'user', content: 'last' },
      ],
    };
    const copy = structuredClone(body);
    const mapped = mapRequestTexts('chatComplete', body, upper);
    expect(body).toEqual(copy);
    expect(mapped).toEqual({
      model: 'm',
      messages: [
        { role: 'system', content: 'SYS' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'PART' },
            { type: 'image_url', image_url: { url: 'u' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{"A":"ARG"}' } }],
        },
        { role: 'tool', tool_call_id: 't', content: 'RESULT' },
        { role: 'user', content: 'LAST' },
      ],
    });
    expect(allRequestTexts('chatComplete', body)).toEqual(['sys', 'part', '{"a":"arg"}', 'result', 'last']);
  });

  it('rewrites a prompt or an input, string or array, and keeps token arrays', () => {
    expect(mapRequestTexts('complete', { prompt: 'p' }, upper)).toEqual({ prompt: 'P' });
    expect(mapRequestTexts('complete', { prompt: ['a', 'b'] }, upper)).toEqual({ prompt: ['A', 'B'] });
    expect(mapRequestTexts('embed', { input: ['x', [1, 2]] }, upper)).toEqual({ input: ['X', [1, 2]] });
    expect(mapRequestTexts('embed', { input: 'x' }, upper)).toEqual({ input: 'X' });
  });
});

describe('every text of a Messages or Responses body', () => {
  it('a system prompt, instructions, tool_result contents and tool_use inputs', () => {
    const messages = {
      system: [{ type: 'text', text: 'sys' }],
      messages: [
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 't', name: 'f', input: { to: 'in', n: [1, 'x'] } }],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't', content: 'res' },
            { type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'blk' }] },
          ],
        },
      ],
    };
    expect(allRequestTexts('chatComplete', messages)).toEqual(['sys', 'in', 'x', 'res', 'blk']);
    expect(mapRequestTexts('chatComplete', { system: 's', messages: [] }, upper)).toEqual({
      system: 'S',
      messages: [],
    });
    const responses = { instructions: 'ins', input: 'hi' };
    expect(mapRequestTexts('chatComplete', responses, upper)).toEqual({ instructions: 'INS', input: 'HI' });
    const answer = {
      type: 'message',
      content: [{ type: 'tool_use', id: 't', name: 'f', input: { to: 'out' } }],
    };
    expect(mapAnswerTexts('chatComplete', answer, upper)).toEqual({
      type: 'message',
      content: [{ type: 'tool_use', id: 't', name: 'f', input: { to: 'OUT' } }],
    });
  });
});

describe('mapAnswerTexts', () => {
  it('rewrites every choice of a chat answer and of a completion; embeddings stay as they are', () => {
    const chat = {
      id: 'c',
      choices: [
        { index: 0, message: { role: 'assistant', content: 'one' }, finish_reason: 'stop' },
        { index: 1, message: { role: 'assistant', content: 'two' }, finish_reason: 'stop' },
      ],
    };
    expect(mapAnswerTexts('chatComplete', chat, upper)).toEqual({
      id: 'c',
      choices: [
        { index: 0, message: { role: 'assistant', content: 'ONE' }, finish_reason: 'stop' },
        { index: 1, message: { role: 'assistant', content: 'TWO' }, finish_reason: 'stop' },
      ],
    });
    expect(allAnswerTexts('chatComplete', chat)).toEqual(['one', 'two']);
    expect(mapAnswerTexts('complete', { choices: [{ text: 'a' }, { text: 'b' }] }, upper)).toEqual({
      choices: [{ text: 'A' }, { text: 'B' }],
    });
    const embeddings = { data: [{ embedding: [0.5] }] };
    expect(mapAnswerTexts('embed', embeddings, upper)).toBe(embeddings);
    expect(allAnswerTexts('embed', embeddings)).toEqual([]);
  });
});
