/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// The Response shows the settings the request made, as OpenAI's does: service_tier (as the provider
// answered it), prompt_cache_key, prompt_cache_retention, safety_identifier, top_logprobs, user, metadata,
// truncation, store, parallel_tool_calls, max_output_tokens, background; a translated chat provider is sent those chat has. The openai
// SDK against the gateway; the fake OpenAI, answering natively (Responses) and as a chat provider.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';

let gateway: TestGateway;
let upstream: FakeUpstream;

beforeAll(async () => {
  [gateway, upstream] = await Promise.all([startGateway(), startFakeOpenAI({ name: 'echo' })]);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), upstream?.close()]);
});

const sdk = (config: Record<string, unknown>): OpenAI => gatewayOpenAI(gateway, config);

const TARGETS = {
  translated: { provider: 'groq', api_key: 'gsk-echo', custom_host: '' },
  native: { provider: 'openai', api_key: 'sk-echo', custom_host: '' },
};

const chatAnswer = () => ({
  id: 'chatcmpl-tier',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [
    {
      index: 0,
      message: { role: 'assistant', content: 'Hello', refusal: null },
      finish_reason: 'stop',
      logprobs: null,
    },
  ],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});

const nativeAnswer = () => ({
  id: 'resp_upstream',
  object: 'response',
  created_at: 1,
  status: 'completed',
  model: 'gpt-4o-mini',
  output: [
    {
      type: 'message',
      id: 'msg_upstream',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Hello', annotations: [], logprobs: [] }],
    },
  ],
  usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
});

const SETTINGS = {
  service_tier: 'auto',
  prompt_cache_key: 'cache-bucket-7',
  safety_identifier: 'user-hash-1',
  top_logprobs: 3,
  user: 'end-user-1',
  metadata: { team: 'search' },
  truncation: 'auto',
  store: false,
  parallel_tool_calls: false,
  max_output_tokens: 200,
  prompt_cache_retention: '24h',
} as const;

describe.each(Object.entries(TARGETS))('a response on a %s target', (how, target) => {
  const client = () => sdk({ ...target, custom_host: upstream.url });

  it('shows the settings the request made, service_tier as the provider answered it', async () => {
    const response = await client().responses.create({ model: 'gpt-4o-mini', input: 'Hi', ...SETTINGS });
    expectOpenAPIValid('Response', response);
    expect(response).toMatchObject({ ...SETTINGS, service_tier: 'default' });

    const events: any[] = [];
    for await (const event of await client().responses.create({
      model: 'gpt-4o-mini',
      input: 'Hi',
      ...SETTINGS,
      stream: true,
    })) {
      expectOpenAPIValid('ResponseStreamEvent', event);
      events.push(event);
    }
    expect(events[0].response).toMatchObject({ ...SETTINGS, service_tier: 'auto' });
    expect(events.at(-1).type).toBe('response.completed');
    expect(events.at(-1).response).toMatchObject({ ...SETTINGS, service_tier: 'default' });
    if (how === 'translated') {
      expect(upstream.requests.at(-1)!.body).toMatchObject({
        service_tier: 'auto',
        prompt_cache_key: 'cache-bucket-7',
        safety_identifier: 'user-hash-1',
        user: 'end-user-1',
      });
    }
  });

  it('shows the request’s service_tier where the provider answers a tier of its own', async () => {
    const body = { ...chatAnswer(), service_tier: 'on_demand' };
    if (how === 'translated') upstream.enqueue({ status: 200, body });
    else upstream.enqueue({ status: 200, body: { ...nativeAnswer(), service_tier: 'on_demand' } });
    const response = await client().responses.create({
      model: 'gpt-4o-mini',
      input: 'Hi',
      service_tier: 'flex',
    });
    expectOpenAPIValid('Response', response);
    expect(response.service_tier).toBe('flex');
  });

  it('shows what the request left unset as OpenAI does: null, top_logprobs 0, no user', async () => {
    const response = await client().responses.create({ model: 'gpt-4o-mini', input: 'Hi' });
    expectOpenAPIValid('Response', response);
    expect(response).toMatchObject({
      prompt_cache_key: null,
      safety_identifier: null,
      top_logprobs: 0,
      service_tier: 'default',
      max_tool_calls: null,
      prompt_cache_retention: null,
      // A foreground response, as OpenAI's says.
      background: false,
    });
    // The document's user is a string: left out when unset.
    expect(response).not.toHaveProperty('user');
  });
});
