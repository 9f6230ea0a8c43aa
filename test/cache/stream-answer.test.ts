/**
 * Stream ⇄ body conversion on recorded provider streams (provider-fixtures) and on built bodies.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bodyToStreamChunks, streamToBody } from '../../src/gateway/cache/index.js';
import type { ChatCompletion, TextCompletion } from '../../src/core/openai-types.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const fixtureDir = path.join(
  process.env.SHARED_DIR ?? path.resolve(repoRoot, '..', 'shared'),
  'reference',
  'provider-fixtures',
);

function recordedStream(name: string): string[] {
  return readFileSync(path.join(fixtureDir, name), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
}

type Json = Record<string, unknown>;
const parsed = (chunks: string[]) => chunks.map((chunk) => JSON.parse(chunk) as Json);

describe('streamToBody on recorded streams', () => {
  it('chat text (OpenAI): content, finish reason, usage and envelope', () => {
    const chunks = recordedStream('openai/chat/openai-text.chunks.txt');
    const body = streamToBody(chunks) as ChatCompletion;
    const expectedText = parsed(chunks)
      .flatMap((e) => (e.choices as Array<{ delta: { content?: string } }>).map((c) => c.delta.content ?? ''))
      .join('');
    expect(expectedText.length).toBeGreaterThan(100);
    expect(body.object).toBe('chat.completion');
    expect(body.id).toBe('chatcmpl-D8Z5oo6uDh67AD85p73ksdT1KxhE0');
    expect(body.model).toBe('gpt-4.1-nano-2025-04-14');
    expect(body.system_fingerprint).toBe('fp_de604bd877');
    expect(body.service_tier).toBe('default');
    expect(body.choices).toHaveLength(1);
    expect(body.choices[0].message.role).toBe('assistant');
    expect(body.choices[0].message.content).toBe(expectedText);
    expect(body.choices[0].message.refusal).toBeNull();
    expect(body.choices[0].finish_reason).toBe('stop');
    expect(body.usage).toMatchObject({ prompt_tokens: 16, completion_tokens: 300, total_tokens: 316 });
  });

  it('chat tool call with reasoning (xAI, OpenAI-compatible)', () => {
    const body = streamToBody(
      recordedStream('openai-compatible/chat/xai-tool-call.chunks.txt'),
    ) as ChatCompletion;
    const message = body.choices[0].message as ChatCompletion['choices'][0]['message'] & {
      reasoning_content?: string;
    };
    expect(body.choices[0].finish_reason).toBe('tool_calls');
    expect(message.tool_calls).toEqual([
      {
        id: 'call_79382389',
        type: 'function',
        function: { name: 'weather', arguments: '{"location":"San Francisco"}' },
      },
    ]);
    expect(message.reasoning_content?.startsWith('First, the user is asking')).toBe(true);
    expect(body.usage?.total_tokens).toBe(560);
  });

  it('text completion (OpenAI): text and the usage of the last event', () => {
    const chunks = recordedStream('openai/completion/openai-completion-text.chunks.txt');
    const body = streamToBody(chunks) as TextCompletion;
    const expectedText = parsed(chunks)
      .flatMap((e) => (e.choices as Array<{ text: string }>).map((c) => c.text))
      .join('');
    expect(body.object).toBe('text_completion');
    expect(body.choices).toEqual([{ index: 0, text: expectedText, finish_reason: 'length', logprobs: null }]);
    expect(body.usage).toEqual({ prompt_tokens: 14, completion_tokens: 16, total_tokens: 30 });
  });
});

describe('streamToBody assembly', () => {
  const head = { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm' };
  const chunk = (choices: unknown[], extra: Json = {}) => JSON.stringify({ ...head, choices, ...extra });

  it('joins tool-call arguments split across chunks, per tool and per choice', () => {
    const body = streamToBody([
      chunk([
        {
          index: 0,
          delta: {
            role: 'assistant',
            tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '' } }],
          },
        },
      ]),
      chunk([{ index: 1, delta: { role: 'assistant', content: 'Second ' } }]),
      chunk([
        {
          index: 0,
          delta: {
            tool_calls: [{ index: 1, id: 'b', type: 'function', function: { name: 'g', arguments: '{"y"' } }],
          },
        },
      ]),
      chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"x":' } }] } }]),
      chunk([
        {
          index: 0,
          delta: {
            tool_calls: [
              { index: 0, function: { arguments: '1}' } },
              { index: 1, function: { arguments: ':2}' } },
            ],
          },
        },
      ]),
      chunk([{ index: 1, delta: { content: 'choice' }, finish_reason: 'stop' }]),
      chunk([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]),
      chunk([], { usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }),
    ]) as ChatCompletion;
    expect(body.choices.map((c) => c.index)).toEqual([0, 1]);
    expect(body.choices[0].message.content).toBeNull();
    expect(body.choices[0].message.tool_calls).toEqual([
      { id: 'a', type: 'function', function: { name: 'f', arguments: '{"x":1}' } },
      { id: 'b', type: 'function', function: { name: 'g', arguments: '{"y":2}' } },
    ]);
    expect(body.choices[0].finish_reason).toBe('tool_calls');
    expect(body.choices[1].message.content).toBe('Second choice');
    expect(body.choices[1].finish_reason).toBe('stop');
    expect(body.usage?.total_tokens).toBe(3);
  });

  it('joins refusals, thinking blocks and logprobs', () => {
    const body = streamToBody([
      chunk([
        { index: 0, delta: { content_blocks: [{ index: 0, delta: { type: 'thinking', thinking: 'Hm' } }] } },
      ]),
      chunk([
        {
          index: 0,
          delta: {
            content_blocks: [{ index: 0, delta: { type: 'thinking', thinking: 'm.', signature: 'sig' } }],
          },
        },
      ]),
      chunk([
        { index: 0, delta: { refusal: "I can't" }, logprobs: { content: [{ token: 'I', logprob: -0.1 }] } },
      ]),
      chunk([
        {
          index: 0,
          delta: { refusal: ' help.' },
          logprobs: { content: [{ token: ' help', logprob: -0.2 }] },
          finish_reason: 'stop',
        },
      ]),
    ]) as ChatCompletion;
    const choice = body.choices[0];
    expect(choice.message.refusal).toBe("I can't help.");
    expect(choice.message.content_blocks).toEqual([{ type: 'thinking', thinking: 'Hmm.', signature: 'sig' }]);
    expect(choice.logprobs).toEqual({
      content: [
        { token: 'I', logprob: -0.1 },
        { token: ' help', logprob: -0.2 },
      ],
    });
  });

  it('gives up on chunks it does not know', () => {
    expect(streamToBody(['not json'])).toBeUndefined();
    expect(streamToBody(['{"type":"response.created"}'])).toBeUndefined();
    expect(streamToBody([])).toBeUndefined();
  });
});

describe('bodyToStreamChunks', () => {
  const chat: ChatCompletion = {
    id: 'chatcmpl-9',
    object: 'chat.completion',
    created: 1770000000,
    model: 'gpt-4o-mini',
    system_fingerprint: 'fp_1',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
            { id: 'call_2', type: 'function', function: { name: 'time', arguments: '{}' } },
          ],
        },
        finish_reason: 'tool_calls',
        logprobs: null,
      },
      {
        index: 1,
        message: { role: 'assistant', content: 'It is sunny.', refusal: null },
        finish_reason: 'stop',
        logprobs: { content: [{ token: 'It', logprob: -0.01 }] },
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 12, total_tokens: 22 },
  };

  it('makes chat.completion.chunk events that add up to the same body', () => {
    const chunks = bodyToStreamChunks(chat)!;
    const events = parsed(chunks);
    expect(events.every((e) => e.object === 'chat.completion.chunk' && e.id === 'chatcmpl-9')).toBe(true);
    expect(events.at(-1)).toMatchObject({ choices: [], usage: chat.usage });
    expect(streamToBody(chunks)).toEqual(chat);
  });

  it('makes text completion events that add up to the same body', () => {
    const text: TextCompletion = {
      id: 'cmpl-1',
      object: 'text_completion',
      created: 1770000000,
      model: 'gpt-3.5-turbo-instruct',
      choices: [
        { index: 0, text: 'Hello', finish_reason: 'length', logprobs: null },
        { index: 1, text: 'Hi', finish_reason: 'stop', logprobs: null },
      ],
      usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
    };
    const chunks = bodyToStreamChunks(text)!;
    expect(parsed(chunks).every((e) => e.object === 'text_completion')).toBe(true);
    expect(streamToBody(chunks)).toEqual(text);
  });

  it('round-trips a recorded stream through a body and back', () => {
    const body = streamToBody(recordedStream('openai/chat/openai-text.chunks.txt'));
    expect(streamToBody(bodyToStreamChunks(body)!)).toEqual(body);
  });

  it('refuses bodies that are not completions', () => {
    expect(bodyToStreamChunks({ object: 'list', data: [] })).toBeUndefined();
    expect(bodyToStreamChunks(null)).toBeUndefined();
    expect(bodyToStreamChunks({ object: 'chat.completion' })).toBeUndefined();
  });
});
