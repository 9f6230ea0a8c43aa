/**
 * A streamed OpenAI answer as output checks see it (stream-answer.ts) reads each chunk's text as every other
 * reader does (chunk-text.ts): a choice's delta content, or a completion choice's text when it has no delta.
 */
import { describe, expect, it } from 'vitest';
import { assembleAnswer, rewriteChunks } from '../../src/gateway/hooks/stream-answer.js';
import type { AnswerChunk } from '../../src/gateway/sink.js';

function chunk(choices: unknown[]): AnswerChunk {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'gpt-4o',
    choices,
  } as unknown as AnswerChunk;
}

describe('a streamed chat answer', () => {
  const chunks = [
    chunk([{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }]),
    chunk([{ index: 0, delta: { content: 'lo' }, finish_reason: null }]),
    // A choice without a delta (null, or absent as undefined) carries no text: it still ends the choice.
    chunk([{ index: 0, delta: null, finish_reason: 'stop' }]),
    chunk([{ index: 1, delta: undefined, finish_reason: 'stop' }]),
  ];

  it('is assembled from the deltas, a choice without one adding no text', () => {
    expect(assembleAnswer(chunks)).toMatchObject({
      object: 'chat.completion',
      choices: [
        { index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' },
        { index: 1, message: { role: 'assistant', content: '' }, finish_reason: 'stop' },
      ],
    });
  });

  it("takes a rewritten answer's text in its first text chunk, leaving a choice without a delta as it is", () => {
    const answer = { choices: [{ index: 0, message: { role: 'assistant', content: 'Bye' } }] };
    const rewritten = rewriteChunks(chunks, answer) as Array<{ choices: unknown[] }>;
    expect(rewritten.map((c) => c.choices[0])).toEqual([
      { index: 0, delta: { role: 'assistant', content: 'Bye' }, finish_reason: null },
      { index: 0, delta: { content: '' }, finish_reason: null },
      { index: 0, delta: null, finish_reason: 'stop' },
      { index: 1, delta: undefined, finish_reason: 'stop' },
    ]);
    expect(rewritten[2]).toBe(chunks[2]);
  });
});

describe('a streamed text completion', () => {
  it('is assembled from and rewritten into its choices’ text', () => {
    const completion = (text: string, finish: string | null): AnswerChunk =>
      ({
        id: 'cmpl-1',
        object: 'text_completion',
        created: 1,
        model: 'gpt-3.5-turbo-instruct',
        choices: [{ index: 0, text, logprobs: null, finish_reason: finish }],
      }) as unknown as AnswerChunk;
    const chunks = [completion('Hel', null), completion('lo', 'stop')];
    expect(assembleAnswer(chunks)).toMatchObject({
      object: 'text_completion',
      choices: [{ index: 0, text: 'Hello', finish_reason: 'stop' }],
    });
    const rewritten = rewriteChunks(chunks, { choices: [{ index: 0, text: 'Bye' }] }) as Array<{
      choices: Array<{ text: string }>;
    }>;
    expect(rewritten.map((c) => c.choices[0].text)).toEqual(['Bye', '']);
  });
});
