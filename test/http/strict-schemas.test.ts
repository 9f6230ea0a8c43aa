/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// A strict schema strict mode cannot take is refused before any call on chat as on the Responses API —
// a chat function tool with `strict: true`, a strict `json_schema` response format, a strict Responses
// `text.format` — with OpenAI's error, whichever target would answer. The openai SDK against the gateway
// and fakes of an OpenAI-wire provider and of Anthropic (a translated one).
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';

const ANTHROPIC_KEY = 'sk-ant-strict-schemas';

let gateway: TestGateway;
let upstream: FakeUpstream;
let anthropic: FakeAnthropic;
let clients: OpenAI[];

beforeAll(async () => {
  [gateway, upstream, anthropic] = await Promise.all([
    startGateway(),
    startFakeOpenAI({ name: 'strict-schemas' }),
    startFakeAnthropic({ apiKey: ANTHROPIC_KEY }),
  ]);
  clients = [
    gatewayOpenAI(gateway, { provider: 'openai-compatible', api_key: 'sk-up', custom_host: upstream.url }),
    gatewayOpenAI(gateway, { provider: 'anthropic', api_key: ANTHROPIC_KEY, custom_host: anthropic.url }),
  ];
});

afterAll(async () => {
  await Promise.all([gateway?.close(), upstream?.close(), anthropic?.close()]);
});

/** Closed and every property required, but with a keyword strict mode does not support. */
const schema = {
  type: 'object',
  properties: { tags: { type: 'array', items: { type: 'string' }, uniqueItems: true } },
  required: ['tags'],
  additionalProperties: false,
};
const problem = "In context=('properties', 'tags'), 'uniqueItems' is not permitted.";

async function refusal(promise: Promise<unknown>): Promise<any> {
  const error: any = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error?.status).toBe(400);
  expect(error.headers.get('x-gateway-error-source')).toBe('gateway');
  expectOpenAPIValid('ErrorResponse', { error: error.error });
  return error.error;
}

describe('strict schemas on every endpoint and target', () => {
  it('refuses a strict chat function tool', async () => {
    for (const client of clients) {
      const error = await refusal(
        client.chat.completions.create({
          model: 'gpt-4o',
          messages: [{ role: 'user', content: 'Tag it' }],
          tools: [{ type: 'function', function: { name: 'tag', parameters: schema, strict: true } }],
        }),
      );
      expect(error).toEqual({
        message: `Invalid schema for function 'tag': ${problem}`,
        type: 'invalid_request_error',
        param: 'tools[0].function.parameters',
        code: 'invalid_function_parameters',
      });
    }
  });

  it('refuses a strict chat response format', async () => {
    for (const client of clients) {
      const error = await refusal(
        client.chat.completions.create({
          model: 'gpt-4o',
          messages: [{ role: 'user', content: 'Tag it' }],
          response_format: { type: 'json_schema', json_schema: { name: 'tags', schema, strict: true } },
        }),
      );
      expect(error).toEqual({
        message: `Invalid schema for response_format 'tags': ${problem}`,
        type: 'invalid_request_error',
        param: 'response_format',
        code: 'invalid_json_schema',
      });
    }
  });

  it('refuses a strict Responses text format', async () => {
    for (const client of clients) {
      const error = await refusal(
        client.responses.create({
          model: 'gpt-4o',
          input: 'Tag it',
          text: { format: { type: 'json_schema', name: 'tags', schema, strict: true } },
        }),
      );
      expect(error).toEqual({
        message: `Invalid schema for response_format 'tags': ${problem}`,
        type: 'invalid_request_error',
        param: 'text.format.schema',
        code: 'invalid_json_schema',
      });
    }
    expect(upstream.requests).toHaveLength(0);
    expect(anthropic.requests).toHaveLength(0);
  });
});
