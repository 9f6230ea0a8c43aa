/**
 * A config whose hook lists are empty (`"input_guardrails": []`, as a config is left once its last
 * guardrail is taken out) has no hooks: pass-through calls under it are relayed, and model calls are
 * answered as under a config without the lists. fetch against a real gateway and a fake OpenAI upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { postWithConfig, startGateway, type TestGateway } from '../helpers/gateway.js';
import { postChat, target } from '../routing/support.js';

let gateway: TestGateway;
let fake: FakeUpstream;

beforeAll(async () => {
  [gateway, fake] = await Promise.all([startGateway(), startFakeOpenAI({ name: 'empty' })]);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), fake?.close()]);
});

const emptyLists = () => ({
  ...target(fake),
  before_request_hooks: [],
  input_guardrails: [],
  after_request_hooks: [],
  output_guardrails: [],
});

describe('empty hook lists', () => {
  it('a pass-through call is relayed to the provider, not refused', async () => {
    const calls = fake.requests.length;
    const response = await postWithConfig(gateway, '/rerank', emptyLists(), { query: 'x' });
    const text = await response.text();
    expect(text).not.toContain('unsupported_parameter');
    expect(fake.requests.length).toBe(calls + 1);
  });

  it('a chat call is answered without hook_results', async () => {
    const response = await postChat(gateway, emptyLists(), {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).not.toHaveProperty('hook_results');
  });
});
