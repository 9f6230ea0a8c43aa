/** The usage a pass-through answer is settled with, read from each provider's own answer shape. */
import { describe, expect, it } from 'vitest';
import { jsonReader } from '../../src/gateway/passthrough/json-answer.js';

async function usageOf(answer: unknown) {
  const reader = jsonReader({ 'content-type': 'application/json' })!;
  async function* body() {
    yield Buffer.from(JSON.stringify(answer));
  }
  for await (const _chunk of reader.tap(body())) {
    // relayed to the client
  }
  return reader.result()?.usage;
}

describe('pass-through usage', () => {
  it.each([
    [
      "OpenAI's chat and completions",
      { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } },
      { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    ],
    [
      "Anthropic's Messages, cache reads and writes counted as input",
      {
        type: 'message',
        usage: {
          input_tokens: 10,
          output_tokens: 5,
          cache_read_input_tokens: 3,
          cache_creation_input_tokens: 2,
        },
      },
      {
        prompt_tokens: 15,
        completion_tokens: 5,
        total_tokens: 20,
        prompt_tokens_details: { cached_tokens: 3, cache_write_tokens: 2 },
      },
    ],
    [
      "OpenAI's Responses",
      {
        object: 'response',
        usage: {
          input_tokens: 10,
          input_tokens_details: { cached_tokens: 4 },
          output_tokens: 5,
          total_tokens: 15,
        },
      },
      {
        prompt_tokens: 10,
        completion_tokens: 5,
        total_tokens: 15,
        prompt_tokens_details: { cached_tokens: 4 },
      },
    ],
    [
      "Bedrock's Converse",
      { usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 } },
      { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    ],
    [
      "Gemini's generateContent",
      { usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 } },
      { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    ],
  ])('reads %s', async (_name, answer, usage) => {
    expect(await usageOf(answer)).toEqual(usage);
  });

  it('reads no usage from an answer without one', async () => {
    expect(await usageOf({ id: 'x' })).toBeUndefined();
    expect(await usageOf({ usage: { input_tokens: 'ten' } })).toBeUndefined();
  });
});
