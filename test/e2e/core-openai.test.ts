/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { postWithConfig, startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import { readChatStream } from '../helpers/chat-stream.js';

let gateway: TestGateway;
let fake: FakeUpstream;
let client: OpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'primary' });
  gateway = await startGateway();
  client = new OpenAI({
    baseURL: gateway.url,
    apiKey: 'sk-provider-secret',
    maxRetries: 0,
    defaultHeaders: {
      'x-gateway-api-key': gateway.adminKey,
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': fake.url,
    },
  });
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

describe('OpenAI-compatible provider through the gateway', () => {
  it('answers a chat completion through the openai SDK', async () => {
    const completion = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'ping' }],
    });
    expect(completion.choices[0].message.content).toBe('[primary] ping');
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    const received = fake.requests.at(-1);
    expect(received?.headers.authorization).toBe('Bearer sk-provider-secret');
  });

  it('streams a chat completion ending with usage', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'stream me' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const { text, usage } = await readChatStream(stream);
    expect(text).toBe('[primary] stream me');
    expect(usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) });
  });

  it('calls a custom_host without a key when none is given, as the spec allows', async () => {
    const response = await postWithConfig(
      gateway,
      '/chat/completions',
      { provider: 'openai', custom_host: fake.url },
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'keyless' }] },
    );
    expect(response.status).toBe(200);
    expect(((await response.json()) as any).choices[0].message.content).toBe('[primary] keyless');
    expect(fake.requests.at(-1)?.headers.authorization).toBeUndefined();
  });

  it("answers a provider's own 499 with its status and error, not a closed connection", async () => {
    // 499 is also what a call is recorded with when its client went away: the client is here.
    for (const stream of [false, true]) {
      const error = await client.chat.completions
        .create({ model: 'fake-status-499', messages: [{ role: 'user', content: 'x' }], stream })
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(499);
      expectOpenAPIValid('ErrorResponse', { error: (error as InstanceType<typeof OpenAI.APIError>).error });
    }
  });

  it('answers completions and embeddings', async () => {
    const completion = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'hello' });
    expectOpenAPIValid('CreateCompletionResponse', completion);
    const embedding = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['a', 'b'] });
    expectOpenAPIValid('CreateEmbeddingResponse', embedding);
    expect(embedding.data).toHaveLength(2);
  });
});

describe('a provider that answers one choice only', () => {
  it('fans n out into one call per choice for Groq, which refuses n above 1', async () => {
    const groq = new OpenAI({
      baseURL: gateway.url,
      apiKey: 'gsk-provider-secret',
      maxRetries: 0,
      defaultHeaders: {
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-provider': 'groq',
        'x-gateway-custom-host': fake.url,
      },
    });
    const before = fake.requests.length;
    const completion = await groq.chat.completions.create({
      model: 'llama-3.3-70b-versatile',
      messages: [{ role: 'user', content: 'two of them' }],
      n: 2,
    });
    expect(completion.choices.map((choice) => choice.index)).toEqual([0, 1]);
    const calls = fake.requests.slice(before);
    expect(calls).toHaveLength(2);
    expect(calls.every((call) => (call.body as { n?: number }).n === undefined)).toBe(true);
  });
});
