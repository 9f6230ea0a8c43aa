/**
 * The usage a pass-through answer is logged, priced and settled with: read by the target's adapter from its
 * provider's own answer shapes, with the conversions its translated calls use.
 */
import { describe, expect, it } from 'vitest';
import type { UpstreamRelay } from '../../src/gateway/attempt.js';
import { readJsonAnswer } from '../../src/gateway/passthrough/json-answer.js';
import { findAdapter } from '../../src/providers/registry.js';

async function usageOf(provider: string, answer: unknown) {
  const adapter = findAdapter(provider)!;
  async function* body() {
    yield Buffer.from(JSON.stringify(answer));
  }
  const relay: UpstreamRelay = {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: body(),
    usageOf: (parsed) => adapter.passthroughUsage(parsed),
  };
  const reader = readJsonAnswer(relay)!;
  // The same relay read again (the rate-limit step, then the log) shares the one copy.
  expect(readJsonAnswer(relay)).toBe(reader);
  for await (const _chunk of relay.body as AsyncIterable<Uint8Array>) {
    // relayed to the client
  }
  return reader.result()?.usage;
}

const message = {
  type: 'message',
  usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 3, cache_creation_input_tokens: 2 },
};
const messageUsage = {
  prompt_tokens: 15,
  completion_tokens: 5,
  total_tokens: 20,
  prompt_tokens_details: { cached_tokens: 3, cache_write_tokens: 2 },
};
const chat = { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } };

describe('pass-through usage', () => {
  it.each([
    ['openai', "OpenAI's chat and completions", chat, chat.usage],
    [
      'openai',
      "OpenAI's embeddings (no completion tokens)",
      { object: 'list', usage: { prompt_tokens: 8, total_tokens: 8 } },
      { prompt_tokens: 8, completion_tokens: 0, total_tokens: 8 },
    ],
    [
      'openai',
      "OpenAI's Responses, cached and reasoning tokens",
      {
        object: 'response',
        usage: {
          input_tokens: 10,
          input_tokens_details: { cached_tokens: 4 },
          output_tokens: 5,
          output_tokens_details: { reasoning_tokens: 2 },
          total_tokens: 15,
        },
      },
      {
        prompt_tokens: 10,
        completion_tokens: 5,
        total_tokens: 15,
        prompt_tokens_details: { cached_tokens: 4 },
        completion_tokens_details: { reasoning_tokens: 2 },
      },
    ],
    ['groq', 'an OpenAI-compatible provider', chat, chat.usage],
    ['anthropic', "Anthropic's Messages, cache reads and writes counted as input", message, messageUsage],
    ['anthropic', "Anthropic's OpenAI-compatible chat completions", chat, chat.usage],
    [
      'bedrock',
      "Bedrock's Converse, cache reads counted as input",
      { usage: { inputTokens: 10, outputTokens: 5, totalTokens: 19, cacheReadInputTokens: 4 } },
      {
        prompt_tokens: 14,
        completion_tokens: 5,
        total_tokens: 19,
        prompt_tokens_details: { cached_tokens: 4 },
      },
    ],
    ['bedrock', "Bedrock's InvokeModel of an Anthropic model", message, messageUsage],
    [
      'google',
      "Gemini's generateContent, thoughts counted as output",
      {
        usageMetadata: {
          promptTokenCount: 10,
          candidatesTokenCount: 5,
          thoughtsTokenCount: 7,
          totalTokenCount: 22,
        },
      },
      {
        prompt_tokens: 10,
        completion_tokens: 12,
        total_tokens: 22,
        completion_tokens_details: { reasoning_tokens: 7 },
      },
    ],
    ['vertex-ai', "Vertex AI's rawPredict of an Anthropic model", message, messageUsage],
    [
      'cohere',
      "Cohere's v2 chat",
      {
        id: 'c',
        usage: {
          tokens: { input_tokens: 12, output_tokens: 4 },
          billed_units: { input_tokens: 9, output_tokens: 3 },
        },
      },
      { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
    ],
  ])('%s: reads %s', async (provider, _name, answer, usage) => {
    expect(await usageOf(provider, answer)).toEqual(usage);
  });

  it('reads no usage from an answer without one, or of a shape its provider does not give', async () => {
    expect(await usageOf('openai', { id: 'x' })).toBeUndefined();
    expect(await usageOf('anthropic', { usage: { input_tokens: 'ten' } })).toBeUndefined();
    expect(
      await usageOf('openai', { usageMetadata: { promptTokenCount: 1, totalTokenCount: 1 } }),
    ).toBeUndefined();
    expect(await usageOf('google', [1, 2])).toBeUndefined();
  });
});
