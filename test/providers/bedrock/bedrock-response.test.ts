import { describe, expect, it } from 'vitest';
import { bedrockAdapter } from '../../../src/providers/bedrock/index.js';
import type { ChatCompletion, EmbeddingResponse } from '../../../src/core/openai-types.js';
import { expectOpenAPIValid } from '../../helpers/openapi.js';
import { readBedrockJsonFixture } from '../../fakes/bedrock/fixtures.js';
import { bedrockRequest } from './helpers.js';
import { parseResponse } from '../operations.js';

function parse(fixture: string, body: Record<string, unknown> = {}, strictCompat = false): ChatCompletion {
  const out = parseResponse(bedrockAdapter, bedrockRequest(body, { strictCompat }), {
    status: 200,
    headers: {},
    body: readBedrockJsonFixture(fixture),
  });
  expectOpenAPIValid('CreateChatCompletionResponse', out);
  return out as ChatCompletion;
}

describe('bedrock response translation', () => {
  it('translates a text answer with usage', () => {
    const out = parse('amazon-bedrock-text.json');
    expect(out.id).toMatch(/^chatcmpl-/);
    expect(out.choices[0].message.content).toMatch(/There are \*\*3\*\*/);
    expect(out.choices[0].finish_reason).toBe('stop');
    expect(out.usage).toEqual({
      prompt_tokens: 22,
      completion_tokens: 57,
      total_tokens: 79,
      prompt_tokens_details: { cached_tokens: 0 },
    });
  });

  it('adds cache reads and writes to prompt_tokens', () => {
    const body = { ...readBedrockJsonFixture('amazon-bedrock-text.json') };
    body.usage = {
      inputTokens: 10,
      outputTokens: 5,
      cacheReadInputTokens: 100,
      cacheWriteInputTokens: 20,
      totalTokens: 135,
    };
    const out = parseResponse(bedrockAdapter, bedrockRequest({}), {
      status: 200,
      headers: {},
      body,
    }) as ChatCompletion;
    expect(out.usage).toEqual({
      prompt_tokens: 130,
      completion_tokens: 5,
      total_tokens: 135,
      prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 20 },
    });
  });

  it('translates several tool calls', () => {
    const out = parse('amazon-bedrock-json-with-tools.1.json', { tools: [] });
    expect(out.choices[0].finish_reason).toBe('tool_calls');
    expect(out.choices[0].message.content).toBe('Calling multiple tools.Finally the JSON response.');
    expect(
      out.choices[0].message.tool_calls?.map((c) => [
        c.id,
        c.function.name,
        JSON.parse(c.function.arguments),
      ]),
    ).toEqual([
      ['tool-1', 'tool-a', { param: 'a' }],
      ['tool-2', 'tool-b', { param: 'b' }],
      ['json-tool-id', 'json', { final: 'result' }],
    ]);
  });

  it('returns the forced json tool input as content for json_object', () => {
    const out = parse('amazon-bedrock-json-tool.1.json', { response_format: { type: 'json_object' } });
    expect(out.choices[0].message.tool_calls).toBeUndefined();
    expect(out.choices[0].finish_reason).toBe('stop');
    expect(JSON.parse(out.choices[0].message.content ?? '').elements[1].location).toBe('London');
  });

  it('puts reasoning in content_blocks unless strict', () => {
    const out = parse('amazon-bedrock-reasoning.json');
    expect(out.choices[0].message.content).toMatch(/^There are \*\*3\*\*/);
    expect(out.choices[0].message.content_blocks?.[0]).toEqual({
      type: 'thinking',
      thinking: expect.stringMatching(/^Let me count/),
      signature: expect.stringMatching(/^EvYB/),
    });
    expect(
      parse('amazon-bedrock-reasoning.json', {}, true).choices[0].message.content_blocks,
    ).toBeUndefined();
  });

  it('translates Titan and Cohere embedding answers', () => {
    const titanReq = {
      ...bedrockRequest({}),
      endpoint: 'embeddings' as const,
      body: { model: 'amazon.titan-embed-text-v2:0', input: 'hi' },
    };
    const titan = parseResponse(bedrockAdapter, titanReq, {
      status: 200,
      headers: {},
      body: { embedding: [0.5, -0.25], inputTextTokenCount: 3 },
    }) as EmbeddingResponse;
    expectOpenAPIValid('CreateEmbeddingResponse', titan);
    expect(titan.data).toEqual([{ object: 'embedding', index: 0, embedding: [0.5, -0.25] }]);
    expect(titan.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });

    const cohereReq = {
      ...bedrockRequest({}),
      endpoint: 'embeddings' as const,
      body: { model: 'cohere.embed-english-v3', input: ['a', 'b'], encoding_format: 'base64' as const },
    };
    const cohere = parseResponse(bedrockAdapter, cohereReq, {
      status: 200,
      headers: { 'x-amzn-bedrock-input-token-count': '4' },
      body: { id: 'x', texts: ['a', 'b'], embeddings: [[1], [2]], response_type: 'embeddings_floats' },
    }) as EmbeddingResponse;
    expect(cohere.data[1].embedding).toBe(Buffer.from(new Float32Array([2]).buffer).toString('base64'));
    expect(cohere.usage.prompt_tokens).toBe(4);
  });

  it('normalises errors: status kept, exception name as code, retry-after read', () => {
    const error = bedrockAdapter.parseError(bedrockRequest({}), {
      status: 429,
      headers: {
        'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/',
        'retry-after': '2',
      },
      bodyText: '{"message":"Too many requests, please wait before trying again."}',
    });
    expect(error.status).toBe(429);
    expect(error.code).toBe('ThrottlingException');
    expect(error.type).toBe('rate_limit_error');
    expect(error.message).toMatch(/^Too many requests/);
    expect(error.retryAfterMs).toBe(2000);
  });
});
