import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../../src/core/errors.js';
import { cohereAdapter } from '../../../src/providers/cohere/index.js';
import type { ChatCompletion, EmbeddingResponse } from '../../../src/core/openai-types.js';
import { readCohereJson } from '../../fakes/cohere/fixtures.js';
import { expectOpenAPIValid } from '../../helpers/openapi.js';
import { cohereRequest } from './helpers.js';
import { parseResponse } from '../operations.js';

const chatReq = (strict = false) => cohereRequest({ model: 'command-a-03-2025', messages: [] }, { strict });

function parse(name: string, strict = false): ChatCompletion {
  const completion = parseResponse(cohereAdapter, chatReq(strict), {
    status: 200,
    headers: {},
    body: readCohereJson(name),
  }) as ChatCompletion;
  expectOpenAPIValid('CreateChatCompletionResponse', completion);
  return completion;
}

describe('Cohere chat response', () => {
  it('translates a text answer with its billed units as usage', () => {
    const completion = parse('cohere-text');
    expect(completion.id).toBe('e7592632-1e3d-424f-b129-bd5f9f980f7b');
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('command-a-03-2025');
    expect(Number.isInteger(completion.created)).toBe(true);
    expect(completion.choices).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content: 'The capital of France is Paris.', refusal: null },
        finish_reason: 'stop',
        logprobs: null,
      },
    ]);
    expect(completion.usage).toEqual({
      prompt_tokens: 12,
      completion_tokens: 7,
      total_tokens: 19,
    });
  });

  it('maps MAX_TOKENS to length', () => {
    expect(parse('cohere-max-tokens').choices[0]!.finish_reason).toBe('length');
  });

  it('translates parallel tool calls, with the tool plan as thinking outside strict mode', () => {
    const completion = parse('cohere-tool-call');
    const message = completion.choices[0]!.message;
    expect(completion.choices[0]!.finish_reason).toBe('tool_calls');
    expect(message.content).toBeNull();
    expect(message.tool_calls).toEqual([
      {
        id: 'weather_dqgshstja6p9',
        type: 'function',
        function: { name: 'weather', arguments: '{"location":"San Francisco"}' },
      },
      {
        id: 'cityAttractions_dcxfx4myvx68',
        type: 'function',
        function: { name: 'cityAttractions', arguments: '{"city":"San Francisco"}' },
      },
    ]);
    expect(message.content_blocks?.[0]?.thinking).toMatch(/^I will use the weather tool/);
    expect(parse('cohere-tool-call', true).choices[0]!.message.content_blocks).toBeUndefined();
  });

  it('gives `{}` for the null arguments of a call without parameters', () => {
    const call = parse('cohere-null-args').choices[0]!.message.tool_calls![0]!;
    expect(call.function).toEqual({ name: 'currentTime', arguments: '{}' });
  });

  it('returns thinking in content_blocks only when not strict', () => {
    const loose = parse('cohere-reasoning').choices[0]!.message;
    expect(loose.content).toBe('2 + 2 = 4');
    expect(loose.content_blocks).toEqual([
      {
        type: 'thinking',
        thinking:
          'Okay, so I need to figure out what 2 + 2 is. Let me start by recalling what addition means.',
      },
      { type: 'text', text: '2 + 2 = 4' },
    ]);
    const strict = parse('cohere-reasoning', true).choices[0]!.message;
    expect(strict).toEqual({ role: 'assistant', content: '2 + 2 = 4', refusal: null });
  });

  it('keeps the text of an answer with citations', () => {
    expect(parse('cohere-citations').choices[0]!.message.content).toMatch(/^The key benefits/);
  });

  it('throws a provider error for a 200 answer that Cohere ended with ERROR', () => {
    const body = { ...readCohereJson('cohere-text'), finish_reason: 'ERROR' };
    expect(() => parseResponse(cohereAdapter, chatReq(), { status: 200, headers: {}, body })).toThrowError(
      ProviderError,
    );
  });
});

describe('Cohere embed response', () => {
  const sample = readCohereJson('cohere-embedding') as { embeddings: { float: number[][] } };

  it('translates float vectors and billed tokens', () => {
    const req = cohereRequest({ model: 'embed-v4.0', input: ['a', 'b'] }, { endpoint: 'embeddings' });
    const out = parseResponse(cohereAdapter, req, {
      status: 200,
      headers: {},
      body: sample,
    }) as EmbeddingResponse;
    expectOpenAPIValid('CreateEmbeddingResponse', out);
    expect(out.data.map((d) => d.embedding)).toEqual(sample.embeddings.float);
    expect(out.data.map((d) => d.index)).toEqual([0, 1]);
    expect(out.usage).toEqual({ prompt_tokens: 10, total_tokens: 10 });
    expect(out.model).toBe('embed-v4.0');
  });

  it('produces base64 float32 vectors when asked', () => {
    const req = cohereRequest(
      { model: 'embed-v4.0', input: ['a', 'b'], encoding_format: 'base64' },
      { endpoint: 'embeddings' },
    );
    const out = parseResponse(cohereAdapter, req, {
      status: 200,
      headers: {},
      body: sample,
    }) as EmbeddingResponse;
    const decoded = Buffer.from(out.data[0]!.embedding as string, 'base64');
    const floats = Array.from({ length: decoded.length / 4 }, (_, i) => decoded.readFloatLE(i * 4));
    expect(floats).toHaveLength(sample.embeddings.float[0]!.length);
    floats.forEach((value, i) => expect(value).toBeCloseTo(sample.embeddings.float[0]![i]!, 6));
  });
});

describe('Cohere errors', () => {
  it('keeps the status and message of an error answer and reads Retry-After', () => {
    const error = cohereAdapter.parseError(chatReq(), {
      status: 429,
      headers: { 'retry-after': '3' },
      bodyText: JSON.stringify({
        id: 'x',
        message: 'You are using a Trial key, which is limited to 10 API calls / minute.',
      }),
    });
    expect(error.status).toBe(429);
    expect(error.type).toBe('rate_limit_error');
    expect(error.message).toMatch(/Trial key/);
    expect(error.retryAfterMs).toBe(3000);
    expect(error.provider).toBe('cohere');
  });

  it('normalises a 401 and a body that is not JSON', () => {
    const auth = cohereAdapter.parseError(chatReq(), {
      status: 401,
      headers: {},
      bodyText: '{"message":"invalid api token"}',
    });
    expect(auth.type).toBe('authentication_error');
    expect(auth.message).toBe('invalid api token');
    const html = cohereAdapter.parseError(chatReq(), {
      status: 502,
      headers: {},
      bodyText: '<html>Bad gateway</html>',
    });
    expect(html.status).toBe(502);
    expect(html.message).toBe('<html>Bad gateway</html>');
  });
});
