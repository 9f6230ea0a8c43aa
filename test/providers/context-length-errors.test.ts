/**
 * A refusal because the prompt is longer than the model's context window reaches the client as OpenAI's
 * 400 `context_length_exceeded` (type invalid_request_error, param messages) from every provider that can
 * tell it, with the provider's own message; other 400s keep their code. The `openai` SDK against a real
 * gateway; each provider is a server answering its real error body.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startFakeVertex, type FakeVertex } from '../fakes/vertex-ai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { client, target, type Config } from '../routing/support.js';
import { vertexTarget } from '../helpers/provider-targets.js';

interface Refusal {
  status: number;
  headers?: Record<string, string>;
  body: string;
}

/** Answers every request with the refusal queued under the first path segment's owner (`/{name}/…`). */
const refusals = new Map<string, Refusal>();
let upstream: Server;
let upstreamUrl: string;
let gateway: TestGateway;
let spare: FakeUpstream;
let vertex: FakeVertex;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const name = (req.url ?? '/').split('/')[1] ?? '';
      const refusal = refusals.get(name);
      if (!refusal) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(refusal.status, { 'content-type': 'application/json', ...refusal.headers });
      res.end(refusal.body);
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  gateway = await startGateway();
  spare = await startFakeOpenAI({ name: 'spare' });
  vertex = await startFakeVertex();
});

afterAll(async () => {
  await gateway?.close();
  await spare?.close();
  await vertex?.close();
  await new Promise((resolve) => upstream?.close(resolve));
});

const ANTHROPIC_TOO_LONG = JSON.stringify({
  type: 'error',
  error: { type: 'invalid_request_error', message: 'prompt is too long: 209353 tokens > 199999 maximum' },
  request_id: 'req_011CWAgPbMohjStFaYrkLZCm',
});

interface Case {
  name: string;
  target: Config;
  model: string;
  refusal: Refusal;
  message: string;
}

const host = (name: string) => `${upstreamUrl}/${name}`;

const cases = (): Case[] => [
  {
    name: 'anthropic',
    target: { provider: 'anthropic', api_key: 'sk-ant-test', custom_host: host('anthropic') },
    model: 'claude-sonnet-4-5',
    refusal: { status: 400, body: ANTHROPIC_TOO_LONG },
    message: 'prompt is too long: 209353 tokens > 199999 maximum',
  },
  {
    name: 'anthropic (prompt and max_tokens)',
    target: { provider: 'anthropic', api_key: 'sk-ant-test', custom_host: host('anthropic-sum') },
    model: 'claude-sonnet-4-5',
    refusal: {
      status: 400,
      body: JSON.stringify({
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message:
            'input length and max_tokens exceed context limit: 198981 + 21333 > 200000, decrease input length or max_tokens and try again',
        },
        request_id: 'req_011CSMpBih64Gz42SHKqX8mZ',
      }),
    },
    message: 'input length and max_tokens exceed context limit: 198981 + 21333 > 200000',
  },
  {
    name: 'bedrock',
    target: {
      provider: 'bedrock',
      cloudc_region: 'eu-west-1',
      cloudc_access_key_id: 'AKIDTEST',
      cloudc_secret_access_key: 'secret',
      custom_host: host('bedrock'),
    },
    model: 'anthropic.claude-3-5-sonnet-20240620-v1:0',
    refusal: {
      status: 400,
      headers: {
        'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/',
      },
      body: JSON.stringify({
        message: 'The model returned the following errors: Input is too long for requested model.',
      }),
    },
    message: 'The model returned the following errors: Input is too long for requested model.',
  },
  {
    name: 'google',
    target: { provider: 'google', api_key: 'AIza-test', custom_host: host('google') },
    model: 'gemini-2.5-pro',
    refusal: {
      status: 400,
      body: JSON.stringify([
        {
          error: {
            code: 400,
            message:
              'The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).',
            errors: [
              {
                message:
                  'The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).',
                domain: 'global',
                reason: 'badRequest',
              },
            ],
            status: 'INVALID_ARGUMENT',
          },
        },
      ]),
    },
    message: 'The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).',
  },
  {
    name: 'deepseek',
    target: { provider: 'deepseek', api_key: 'sk-test', custom_host: host('deepseek') },
    model: 'deepseek-chat',
    refusal: {
      status: 400,
      body: JSON.stringify({
        error: {
          message:
            "This model's maximum context length is 65536 tokens. However, you requested 66343 tokens (62247 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.",
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_request_error',
        },
      }),
    },
    message: "This model's maximum context length is 65536 tokens.",
  },
  {
    name: 'x-ai',
    target: { provider: 'x-ai', api_key: 'xai-test', custom_host: host('x-ai') },
    model: 'grok-3',
    refusal: {
      status: 400,
      body: JSON.stringify({
        code: 'Client specified an invalid argument',
        error: "This model's maximum prompt length is 131072 but the request contains 136973 tokens.",
      }),
    },
    message: "This model's maximum prompt length is 131072 but the request contains 136973 tokens.",
  },
  {
    name: 'groq',
    target: { provider: 'groq', api_key: 'gsk-test', custom_host: host('groq') },
    model: 'llama-3.3-70b-versatile',
    refusal: {
      status: 400,
      body: JSON.stringify({
        error: {
          message: 'Please reduce the length of the messages or completion.',
          type: 'invalid_request_error',
          param: 'messages',
          code: 'context_length_exceeded',
        },
      }),
    },
    message: 'Please reduce the length of the messages or completion.',
  },
  {
    name: 'azure-openai',
    target: {
      provider: 'azure-openai',
      api_key: 'azure-test',
      custom_host: host('azure'),
      cloudd_deployment_name: 'gpt4o',
      cloudd_api_version: '2024-10-21',
    },
    model: 'gpt-4o',
    refusal: {
      status: 400,
      body: JSON.stringify({
        error: {
          message:
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 204308 tokens. Please reduce the length of the messages.",
          type: 'invalid_request_error',
          param: 'messages',
          code: 'context_length_exceeded',
        },
      }),
    },
    message: "This model's maximum context length is 128000 tokens.",
  },
  {
    name: 'mistral-ai',
    target: { provider: 'mistral-ai', api_key: 'mistral-test', custom_host: host('mistral') },
    model: 'mistral-large-latest',
    refusal: {
      status: 400,
      body: JSON.stringify({
        object: 'error',
        message: 'Prompt contains 300000 tokens, too large for model with 131072 maximum context length',
        type: 'invalid_request_error',
        param: null,
        code: null,
      }),
    },
    message: 'Prompt contains 300000 tokens, too large for model with 131072 maximum context length',
  },
  {
    name: 'cohere',
    target: { provider: 'cohere', api_key: 'co-test', custom_host: host('cohere') },
    model: 'command-r-plus',
    refusal: {
      status: 400,
      body: JSON.stringify({
        id: '5f8c2f0e-2b5e-4f6e-9d7e-0a1b2c3d4e5f',
        message:
          'too many tokens: total number of tokens in the prompt cannot exceed 128000 - received 131392. Try using a shorter prompt, or enabling prompt truncating. See https://docs.cohere.com/reference/chat for more details.',
      }),
    },
    message: 'too many tokens: total number of tokens in the prompt cannot exceed 128000 - received 131392.',
  },
  {
    name: 'cohere (size limit)',
    target: { provider: 'cohere', api_key: 'co-test', custom_host: host('cohere-size') },
    model: 'command-a-03-2025',
    refusal: {
      status: 400,
      body: JSON.stringify({
        id: '0b6d2c1a-7e3f-4a8b-9c0d-1e2f3a4b5c6d',
        message:
          "too many tokens: size limit exceeded by 11326 tokens. Try using shorter or fewer inputs, or setting prompt_truncation='AUTO'.",
      }),
    },
    message: 'too many tokens: size limit exceeded by 11326 tokens.',
  },
];

const CASE_NAMES = [
  'anthropic',
  'anthropic (prompt and max_tokens)',
  'bedrock',
  'google',
  'deepseek',
  'x-ai',
  'groq',
  'azure-openai',
  'mistral-ai',
  'cohere',
  'cohere (size limit)',
];

async function refusalOf(
  config: Config,
  model: string,
  stream = false,
): Promise<InstanceType<typeof OpenAI.APIError>> {
  const sdk = client(gateway, config);
  const messages = [{ role: 'user' as const, content: 'a very long prompt' }];
  const error = await (
    stream
      ? sdk.chat.completions.create({ model, messages, stream: true }).then(async (s) => {
          for await (const chunk of s) void chunk;
        })
      : sdk.chat.completions.create({ model, messages })
  ).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return error as InstanceType<typeof OpenAI.APIError>;
}

describe.each(CASE_NAMES)('%s: prompt longer than the context window', (name) => {
  const found = () => cases().find((c) => c.name === name)!;

  it.each([false, true])(
    "is OpenAI's 400 context_length_exceeded with the provider's message (stream: %s)",
    async (stream) => {
      const c = found();
      const owner = (c.target.custom_host as string).split('/').pop()!;
      refusals.set(owner, c.refusal);
      const error = await refusalOf({ ...c.target }, c.model, stream);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.status).toBe(400);
      expect(error.code).toBe('context_length_exceeded');
      expect(error.type).toBe('invalid_request_error');
      expect(error.param).toBe('messages');
      expect(error.message).toContain(c.message);
    },
  );
});

describe('other refusals', () => {
  it('a 400 of another kind keeps its own code', async () => {
    refusals.set('anthropic-other', {
      status: 400,
      body: JSON.stringify({
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message: 'max_tokens: 10000 > 4096, which is the maximum allowed number of output tokens',
        },
      }),
    });
    const error = await refusalOf(
      { provider: 'anthropic', api_key: 'sk-ant-test', custom_host: host('anthropic-other') },
      'claude-sonnet-4-5',
    );
    expect(error.status).toBe(400);
    expect(error.code).toBe('invalid_request_error');
  });

  it("Cohere's refusal of max_tokens over the model's output keeps its own code", async () => {
    refusals.set('cohere-output', {
      status: 400,
      body: JSON.stringify({
        id: 'c0ffee00-0000-4000-8000-000000000000',
        message:
          'too many tokens: max tokens must be less than or equal to 4096, the maximum output for this model - received 8192.',
      }),
    });
    const error = await refusalOf(
      { provider: 'cohere', api_key: 'co-test', custom_host: host('cohere-output') },
      'command-r-plus',
    );
    expect(error.status).toBe(400);
    expect(error.code).not.toBe('context_length_exceeded');
  });

  it('a fallback on_status_codes [400] still moves on to the next target', async () => {
    refusals.set('anthropic-fallback', { status: 400, body: ANTHROPIC_TOO_LONG });
    const first = { provider: 'anthropic', api_key: 'sk-ant-test', custom_host: host('anthropic-fallback') };
    const config = {
      strategy: { mode: 'fallback', on_status_codes: [400] },
      targets: [first, target(spare)],
    };
    const answer = await client(gateway, config).chat.completions.create({
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(answer.choices[0]!.message.content).toMatch(/^\[spare\]/);

    const without = {
      strategy: { mode: 'fallback', on_status_codes: [500] },
      targets: [first, target(spare)],
    };
    const error = await refusalOf(without, 'claude-sonnet-4-5');
    expect(error.code).toBe('context_length_exceeded');
  });
});

describe('vertex-ai: prompt longer than the context window', () => {
  it("Gemini's INVALID_ARGUMENT is OpenAI's 400 context_length_exceeded", async () => {
    const message = 'The input token count (81881) exceeds the maximum number of tokens allowed (65536).';
    vertex.enqueue({ status: 400, message, rpcStatus: 'INVALID_ARGUMENT' });
    const error = await refusalOf(vertexTarget(vertex), 'gemini-2.5-pro');
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.code).toBe('context_length_exceeded');
    expect(error.param).toBe('messages');
    expect(error.message).toContain(message);
  });

  it("Claude's prompt is too long is OpenAI's 400 context_length_exceeded", async () => {
    const message = 'prompt is too long: 201130 tokens > 200000 maximum';
    vertex.enqueue({ anthropicError: { status: 400, type: 'invalid_request_error', message } });
    const error = await refusalOf(vertexTarget(vertex), 'claude-sonnet-4-5');
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.code).toBe('context_length_exceeded');
    expect(error.param).toBe('messages');
    expect(error.message).toContain(message);
  });
});
