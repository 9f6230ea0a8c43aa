/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../../src/core/errors.js';
import { googleAdapter } from '../../../src/providers/google/index.js';
import type { ChatCompletion, EmbeddingResponse } from '../../../src/core/openai-types.js';
import { expectOpenAPIValid } from '../../helpers/openapi.js';
import { readGoogleFixture, toSse } from '../../fakes/google/fixtures.js';
import { assemble, chatRequest, replayStream } from './helpers.js';
import { createStreamTranslator, parseResponse } from '../operations.js';

function parse(body: unknown, strictCompat = false): ChatCompletion {
  const completion = parseResponse(googleAdapter, chatRequest({}, { strictCompat }), {
    status: 200,
    headers: {},
    body,
  }) as ChatCompletion;
  expectOpenAPIValid('CreateChatCompletionResponse', completion);
  return completion;
}

describe('google response', () => {
  it('translates the recorded text answer with usage counting thoughts as completion tokens', () => {
    const fixture = readGoogleFixture('google-text.json') as any;
    const completion = parse(fixture);
    expect(completion.id).toBe(`chatcmpl-${fixture.responseId}`);
    expect(completion.model).toBe('gemini-3-pro-preview');
    expect(completion.choices).toHaveLength(1);
    expect(completion.choices[0].message.content).toBe(fixture.candidates[0].content.parts[0].text);
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(completion.choices[0].message.content_blocks).toBeUndefined();
    expect(completion.usage).toEqual({
      prompt_tokens: 9,
      completion_tokens: 28 + 244,
      total_tokens: 281,
      completion_tokens_details: { reasoning_tokens: 244 },
    });
  });

  it.each(['google-tool-call.json', 'google-tool-call-gemini3.json'])(
    'translates the recorded tool call %s',
    (name) => {
      const fixture = readGoogleFixture(name) as any;
      const completion = parse(fixture);
      const choice = completion.choices[0];
      expect(choice.finish_reason).toBe('tool_calls');
      expect(choice.message.content).toBeNull();
      expect(choice.message.tool_calls).toEqual([
        {
          id: expect.stringMatching(/^call_/),
          type: 'function',
          function: { name: 'weather', arguments: '{"location":"San Francisco"}' },
        },
      ]);
      // the signature Gemini 3 needs back rides in content_blocks, only when not strict
      expect(choice.message.content_blocks).toEqual([
        {
          type: 'thinking',
          thinking: '',
          signature: fixture.candidates[0].content.parts[0].thoughtSignature,
        },
      ]);
      expect(parse(fixture, true).choices[0].message.content_blocks).toBeUndefined();
    },
  );

  it('puts thought summaries in content_blocks unless strict, with cached tokens reported', () => {
    const body = {
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { text: 'Counting letters.', thought: true },
              { text: 'Three.', thoughtSignature: 'S1' },
            ],
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: {
        promptTokenCount: 20,
        candidatesTokenCount: 2,
        thoughtsTokenCount: 5,
        cachedContentTokenCount: 12,
        totalTokenCount: 27,
      },
      modelVersion: 'gemini-2.5-flash',
      responseId: 'r1',
    };
    const loose = parse(body);
    expect(loose.choices[0].message.content).toBe('Three.');
    expect(loose.choices[0].message.content_blocks).toEqual([
      { type: 'thinking', thinking: 'Counting letters.', signature: 'S1' },
      { type: 'text', text: 'Three.' },
    ]);
    expect(loose.usage).toEqual({
      prompt_tokens: 20,
      completion_tokens: 7,
      total_tokens: 27,
      prompt_tokens_details: { cached_tokens: 12 },
      completion_tokens_details: { reasoning_tokens: 5 },
    });
    const strict = parse(body, true);
    expect(strict.choices[0].message.content).toBe('Three.');
    expect(strict.choices[0].message.content_blocks).toBeUndefined();
  });

  it('returns one choice per candidate (n) and maps finish reasons', () => {
    const completion = parse({
      candidates: [
        { content: { role: 'model', parts: [{ text: 'A' }] }, finishReason: 'MAX_TOKENS', index: 0 },
        { content: { role: 'model', parts: [{ text: 'B' }] }, finishReason: 'SAFETY', index: 1 },
        { content: { role: 'model', parts: [{ text: 'C' }] }, finishReason: 'RECITATION', index: 2 },
      ],
    });
    expect(completion.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([
      [0, 'A', 'length'],
      [1, 'B', 'content_filter'],
      [2, 'C', 'content_filter'],
    ]);
  });

  it('turns a blocked prompt into an empty content_filter choice', () => {
    const completion = parse({
      promptFeedback: { blockReason: 'PROHIBITED_CONTENT' },
      usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 },
    });
    expect(completion.choices).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content: null, refusal: null },
        finish_reason: 'content_filter',
        logprobs: null,
      },
    ]);
  });

  it('translates embeddings, producing base64 from floats when asked', () => {
    const floats = [0.5, -1.25, 3];
    const parseEmbeddings = (encoding: 'float' | 'base64') =>
      parseResponse(
        googleAdapter,
        {
          ...chatRequest({}),
          endpoint: 'embeddings',
          body: { model: 'gemini-embedding-001', input: ['a', 'b'], encoding_format: encoding },
        },
        { status: 200, headers: {}, body: { embeddings: [{ values: floats }, { values: [1] }] } },
      ) as EmbeddingResponse;
    const asFloats = parseEmbeddings('float');
    expectOpenAPIValid('CreateEmbeddingResponse', asFloats);
    expect(asFloats.data.map((d) => d.embedding)).toEqual([floats, [1]]);
    // The OpenAPI document types `embedding` as numbers only; the base64 string is what the SDK decodes.
    const asBase64 = parseEmbeddings('base64');
    expect(typeof asBase64.data[0].embedding).toBe('string');
    const bytes = Buffer.from(asBase64.data[0].embedding as string, 'base64');
    expect(Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4))).toEqual(floats);
  });
});

describe('google errors', () => {
  it('keeps the recorded 429 status and reads RetryInfo into retryAfterMs', () => {
    const body = readGoogleFixture('google-429-retry-info.json');
    const error = googleAdapter.parseError(chatRequest({}), {
      status: 429,
      headers: {},
      bodyText: JSON.stringify(body),
    });
    expect(error).toBeInstanceOf(ProviderError);
    expect(error.status).toBe(429);
    expect(error.type).toBe('rate_limit_error');
    expect(error.code).toBe('resource_exhausted');
    expect(error.message).toBe('You exceeded your current quota, please check your plan.');
    expect(error.retryAfterMs).toBe(34400);
  });

  it('prefers a Retry-After header, and survives a body that is not JSON', () => {
    const error = googleAdapter.parseError(chatRequest({}), {
      status: 503,
      headers: { 'retry-after': '3' },
      bodyText: '<html>Service Unavailable</html>',
    });
    expect(error.status).toBe(503);
    expect(error.retryAfterMs).toBe(3000);
    expect(error.message).toContain('Service Unavailable');
  });

  it('reads the array-wrapped error body Google sends on some failures', () => {
    const error = googleAdapter.parseError(chatRequest({}), {
      status: 400,
      headers: {},
      bodyText: JSON.stringify([
        { error: { code: 400, message: 'API key not valid.', status: 'INVALID_ARGUMENT' } },
      ]),
    });
    expect([error.status, error.code, error.message]).toEqual([
      400,
      'invalid_argument',
      'API key not valid.',
    ]);
  });

  it('turns an error event inside a 200 stream into an error output with its status', () => {
    const outputs = replayStream(
      googleAdapter,
      chatRequest({ stream: true }),
      toSse([
        JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: 'Hel' }] }, index: 0 }] }),
        JSON.stringify({ error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } }),
        JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: 'lo' }] }, index: 0 }] }),
      ]),
    );
    const errors = outputs.filter((o) => o.type === 'error');
    expect(errors).toHaveLength(1);
    const error = (errors[0] as { error: ProviderError }).error;
    expect([error.status, error.code]).toEqual([503, 'unavailable']);
    expect(assemble(outputs).text).toBe('Hel');
    expect(outputs.some((o) => o.type === 'done')).toBe(false);
  });

  it('gives an error event without a numeric code the status of its rpc code', () => {
    const outputs = replayStream(
      googleAdapter,
      chatRequest({ stream: true }),
      toSse([
        JSON.stringify({
          error: {
            message: 'Quota',
            status: 'RESOURCE_EXHAUSTED',
            details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '2s' }],
          },
        }),
      ]),
    );
    const error = (outputs[0] as { error: ProviderError }).error;
    expect([error.status, error.retryAfterMs]).toEqual([429, 2000]);
  });

  it('ends a stream whose prompt was blocked with content_filter', () => {
    const outputs = replayStream(
      googleAdapter,
      chatRequest({ stream: true }),
      toSse([
        JSON.stringify({
          promptFeedback: { blockReason: 'SAFETY' },
          usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 },
        }),
      ]),
    );
    const got = assemble(outputs);
    for (const chunk of got.chunks) expectOpenAPIValid('CreateChatCompletionStreamResponse', chunk);
    expect(got.finishReason).toBe('content_filter');
    expect(got.done).toBe(true);
  });

  it('does not pass a cut stream off as complete', () => {
    const req = chatRequest({ stream: true, stream_options: { include_usage: true } });
    const outputs = replayStream(
      googleAdapter,
      req,
      toSse([
        JSON.stringify({
          candidates: [{ content: { role: 'model', parts: [{ text: 'Hel' }] } }],
          usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1 },
        }),
      ]),
    );
    expect(outputs.some((o) => o.type === 'done')).toBe(false);
    expect(assemble(outputs).usage).toBeUndefined();
    const translator = createStreamTranslator(googleAdapter, req);
    expect(translator.finished()).toBe(false);
  });

  it('reports malformed events without stopping', () => {
    const outputs = replayStream(
      googleAdapter,
      chatRequest({ stream: true }),
      toSse([
        '{not json',
        JSON.stringify({ candidates: [{ content: { parts: [{ text: 'ok' }] }, finishReason: 'STOP' }] }),
      ]),
    );
    expect(outputs[0].type).toBe('malformed');
    expect(assemble(outputs).text).toBe('ok');
  });
});
