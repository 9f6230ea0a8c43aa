import { describe, expect, it } from 'vitest';
import {
  validateChatCompletionRequest,
  validateCompletionRequest,
  validateEmbeddingRequest,
} from '../../src/core/schemas/index.js';
import { chatBodyCases, completionBodyCases, embeddingBodyCases } from './cases.js';
import { goodCompletionBodies, goodEmbeddingBodies, minimalChatBodies, richChatBody } from './good-bodies.js';
import { expectGatewayError } from './assert-rejects.js';
import { validateResponsesRequest } from '../../src/core/schemas/responses-request.js';
import { validateMessagesRequest } from '../../src/core/schemas/messages-request.js';
import { validateCreateBatch } from '../../src/server/routes/batch-body.js';
import { validateCreateFineTuningJob } from '../../src/server/routes/fine-tuning-body.js';
import {
  validateCreateApiKey,
  validateUpdateApiKey,
} from '../../src/server/routes/management/body-schemas.js';

const validators = [
  ['chat', validateChatCompletionRequest, chatBodyCases],
  ['completions', validateCompletionRequest, completionBodyCases],
  ['embeddings', validateEmbeddingRequest, embeddingBodyCases],
] as const;

describe.each(validators)('%s body', (_name, validate, cases) => {
  it.each(cases)('rejects $name (param $param)', ({ body, param }) => {
    const error = expectGatewayError(() => validate(body), 'invalid_body', param);
    if (param !== null) expect(error.message.startsWith(`${param} `)).toBe(true);
    expect(error.message).not.toMatch(/anyOf|union/i);
  });

  it.each([null, 'text', 42, true, undefined])('rejects a non-object body %s with param null', (body) => {
    expectGatewayError(() => validate(body), 'invalid_body', null);
  });

  it('cases are sent as JSON, so each must survive a JSON round trip unchanged', () => {
    for (const { body } of cases) expect(JSON.parse(JSON.stringify(body))).toEqual(body);
  });
});

describe('chat body', () => {
  it('accepts a rich request with tools, json_schema and stream_options, returning it unchanged', () => {
    const body = JSON.parse(JSON.stringify(richChatBody)) as unknown;
    const result = validateChatCompletionRequest(body);
    expect(result).toBe(body);
    expect(result.messages).toHaveLength(richChatBody.messages.length);
    expect((result as unknown as Record<string, unknown>).top_k).toBe(40);
  });

  it.each(minimalChatBodies)('accepts %j', (body) => {
    expect(() => validateChatCompletionRequest(body)).not.toThrow();
  });

  it('names the field and the rule in the message', () => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'x' }], temperature: 3 };
    expect(() => validateChatCompletionRequest(body)).toThrow('temperature must be at most 2');
    const role = { model: 'm', messages: [{ role: 'robot', content: 'x' }] };
    expect(() => validateChatCompletionRequest(role)).toThrow(/messages\[0\]\.role must be one of 'system'/);
    const bias = { model: 'm', messages: [{ role: 'user', content: 'x' }], logit_bias: { '7': -101 } };
    expect(() => validateChatCompletionRequest(bias)).toThrow('logit_bias.7 must be at least -100');
  });

  it('accepts the int64 bounds of seed and rejects the next representable number', () => {
    const base = { model: 'm', messages: [{ role: 'user', content: 'x' }] };
    const max = JSON.parse('{"seed": 9223372036854775807}') as object;
    expect(() => validateChatCompletionRequest({ ...base, ...max })).not.toThrow();
    const over = JSON.parse('{"seed": 9223372036854777856}') as object;
    expectGatewayError(() => validateChatCompletionRequest({ ...base, ...over }), 'invalid_body', 'seed');
  });

  it('accepts exactly 128 tools and 4 stop sequences', () => {
    const tools = Array.from({ length: 128 }, (_, i) => ({ type: 'function', function: { name: `f${i}` } }));
    const body = {
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      tools,
      stop: ['a', 'b', 'c', 'd'],
    };
    expect(() => validateChatCompletionRequest(body)).not.toThrow();
  });
});

describe('the field named under a union of kinds', () => {
  it('a Responses message without type (its usual form) is checked as a message', () => {
    const part = { model: 'm', input: [{ role: 'user', content: [{ type: 'input_text' }] }] };
    expectGatewayError(() => validateResponsesRequest(part), 'invalid_body', 'input[0].content[0].text');
    const role = { model: 'm', input: [{ role: 'bogus', content: 'x' }] };
    expect(() => validateResponsesRequest(role)).toThrow(/^input\[0\]\.role must be one of 'user'/);
    const output = { model: 'm', input: [{ call_id: 'call_1', output: '21C' }] };
    expectGatewayError(() => validateResponsesRequest(output), 'invalid_body', 'input[0].type');
  });

  it('a key every kind requires is still reported missing', () => {
    const chat = { model: 'm', messages: [{ role: 'user', content: [{ text: 'x' }] }] };
    expectGatewayError(
      () => validateChatCompletionRequest(chat),
      'invalid_body',
      'messages[0].content[0].type',
    );
    const messages = { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: [{ text: 'x' }] }] };
    expectGatewayError(
      () => validateMessagesRequest(messages),
      'invalid_body',
      'messages[0].content[0].type',
    );
  });
});

describe('completions body', () => {
  it.each(goodCompletionBodies)('accepts %j', (body) => {
    expect(() => validateCompletionRequest(body)).not.toThrow();
  });

  it('says best_of must be greater than n', () => {
    expect(() => validateCompletionRequest({ model: 'i', prompt: 'x', best_of: 2, n: 3 })).toThrow(
      'best_of must be greater than n (3)',
    );
  });
});

describe('embeddings body', () => {
  it.each(goodEmbeddingBodies)('accepts %j', (body) => {
    expect(() => validateEmbeddingRequest(body)).not.toThrow();
  });

  it('accepts exactly 2048 inputs', () => {
    const input = Array.from({ length: 2048 }, () => 'a');
    expect(() => validateEmbeddingRequest({ model: 'e', input })).not.toThrow();
  });
});

describe('messages for pattern-checked fields', () => {
  it('explains logit_bias keys', () => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'x' }], logit_bias: { hello: 1 } };
    expect(() => validateChatCompletionRequest(body)).toThrow(
      'logit_bias.hello is not a token id: logit_bias keys must be strings of digits',
    );
  });
});

describe('metadata limits of the fine-tuning, batch and chat bodies', () => {
  const tooMany = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
  it.each([
    [
      'chat completion',
      (metadata: unknown) =>
        validateChatCompletionRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], metadata }),
    ],
    [
      'fine-tuning job',
      (metadata: unknown) => validateCreateFineTuningJob({ model: 'm', training_file: 'f', metadata }),
    ],
    [
      'batch',
      (metadata: unknown) =>
        validateCreateBatch({
          input_file_id: 'f',
          endpoint: '/v1/chat/completions',
          completion_window: '24h',
          metadata,
        }),
    ],
  ])('%s: says the 16-pair limit and the value length', (_name, validate) => {
    expect(() => validate(tooMany)).toThrow('metadata has 17 keys: at most 16 are allowed');
    expect(() => validate({ k: 'v'.repeat(513) })).toThrow('metadata.k must be at most 512 characters');
    expect(() =>
      validate(Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, 'v']))),
    ).not.toThrow();
  });
});

describe('metadata limits count characters as OpenAI does: Unicode code points', () => {
  // An emoji outside the Basic Multilingual Plane: one character, two UTF-16 code units.
  const EMOJI = '\u{1F600}';
  it.each([
    ['response', (metadata: unknown) => validateResponsesRequest({ model: 'm', input: 'x', metadata })],
    [
      'fine-tuning job',
      (metadata: unknown) => validateCreateFineTuningJob({ model: 'm', training_file: 'f', metadata }),
    ],
    [
      'batch',
      (metadata: unknown) =>
        validateCreateBatch({
          input_file_id: 'f',
          endpoint: '/v1/chat/completions',
          completion_window: '24h',
          metadata,
        }),
    ],
    ['api key', (metadata: unknown) => validateCreateApiKey({ name: 'k', role: 'admin', metadata })],
    ['api key update', (metadata: unknown) => validateUpdateApiKey({ metadata })],
    [
      'chat completion',
      (metadata: unknown) =>
        validateChatCompletionRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], metadata }),
    ],
  ])('%s: 64-character keys and 512-character values, not UTF-16 code units', (_name, validate) => {
    expect(() => validate({ [EMOJI.repeat(64)]: EMOJI.repeat(512) })).not.toThrow();
    expect(() => validate({ ['é'.repeat(64)]: 'é'.repeat(512) })).not.toThrow();
    expectGatewayError(
      () => validate({ [EMOJI.repeat(65)]: 'v' }),
      'invalid_body',
      `metadata.${EMOJI.repeat(65)}`,
    );
    expectGatewayError(() => validate({ k: EMOJI.repeat(513) }), 'invalid_body', 'metadata.k');
    expect(() => validate({ k: EMOJI.repeat(513) })).toThrow('metadata.k must be at most 512 characters');
  });
});
