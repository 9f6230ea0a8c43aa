/**
 * A call's type, as `default.allowedRequestTypes` and webhooks are told it, is the client's call: a
 * Messages or Responses call is `messages` or `createModelResponse` whether its target has the API
 * natively or is called through chat. The Anthropic and `openai` SDKs against a real gateway.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

let gateway: TestGateway;
let fake: FakeUpstream;

beforeAll(async () => {
  [gateway, fake] = await Promise.all([startGateway(), startFakeOpenAI({ name: 'types' })]);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), fake?.close()]);
});

const chatOnly = {
  id: 'chat-only',
  deny: true,
  'default.allowedRequestTypes': { allowed: ['chatComplete'] },
};

function headers(target: Record<string, unknown>): Record<string, string> {
  const config = { ...target, input_guardrails: [chatOnly] };
  return { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-config': JSON.stringify(config) };
}

// Neither has the Messages API; groq has no Responses API either: both calls go to them as chat.
const openaiTarget = () => ({ provider: 'openai', api_key: 'sk-oai', custom_host: fake.url });
const groqTarget = () => ({ provider: 'groq', api_key: 'gsk-test', custom_host: fake.url });

describe('default.allowedRequestTypes on calls translated to chat', () => {
  it('a Messages call is a messages call: allowed ["chatComplete"] refuses it (446)', async () => {
    const anthropic = new Anthropic({
      baseURL: gateway.origin,
      apiKey: 'unused',
      maxRetries: 0,
      defaultHeaders: headers(openaiTarget()),
    });
    const before = fake.requests.length;
    const error = await anthropic.messages
      .create({ model: 'gpt-4o-mini', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect((error as { status?: number } | undefined)?.status).toBe(446);
    expect(fake.requests.length).toBe(before);
  });

  it('a Responses call is a createModelResponse call: allowed ["chatComplete"] refuses it (446)', async () => {
    const openai = new OpenAI({
      baseURL: gateway.url,
      apiKey: 'unused',
      maxRetries: 0,
      defaultHeaders: headers(groqTarget()),
    });
    const before = fake.requests.length;
    const error = await openai.responses.create({ model: 'llama-3.1-8b-instant', input: 'hi' }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect((error as APIError | undefined)?.status).toBe(446);
    expect((error as APIError).error).toMatchObject({ code: 'hooks_failed' });
    expect(fake.requests.length).toBe(before);
  });

  it('a chat call still passes', async () => {
    const openai = new OpenAI({
      baseURL: gateway.url,
      apiKey: 'unused',
      maxRetries: 0,
      defaultHeaders: headers(openaiTarget()),
    });
    const answer = await openai.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(answer.choices[0].message.content).toContain('hi');
  });
});
