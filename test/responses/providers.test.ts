/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// POST /v1/responses on every chat-capable provider: the openai SDK's responses client against the gateway
// and each provider's fake (replaying recorded answers in the provider's own wire format), streamed and
// not; each answer validated against the OpenAPI document's Response schema, each event against
// ResponseStreamEvent, and each response read back as stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import { startProviderFakes, type ProviderFakes } from '../helpers/provider-targets.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';

let gateway: TestGateway;
let providers: ProviderFakes;
let openai: FakeUpstream;

beforeAll(async () => {
  [gateway, providers, openai] = await Promise.all([
    startGateway(),
    startProviderFakes(),
    startFakeOpenAI({ name: 'openai' }),
  ]);
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([providers?.close(), openai?.close()]);
});

interface Upstream {
  name: string;
  config: () => Record<string, unknown>;
  model: () => string;
  answerText: (prompt: string) => string;
}

const NAMES = [
  'anthropic',
  'google',
  'vertex-ai (gemini)',
  'vertex-ai (claude)',
  'bedrock',
  'azure-openai',
  'cohere',
] as const;

const UPSTREAMS: Upstream[] = [
  {
    name: 'openai',
    config: () => ({ provider: 'openai', api_key: 'sk-openai', custom_host: openai.url }),
    model: () => 'gpt-4o-mini',
    answerText: (prompt) => `[openai] ${prompt}`,
  },
  ...NAMES.map((name): Upstream => ({
    name,
    config: () => {
      const c = providers.byName(name);
      return { provider: c.provider, ...c.keys };
    },
    model: () => providers.byName(name).model,
    answerText: (prompt) => providers.byName(name).answerText(prompt),
  })),
];

describe.each(UPSTREAMS.map((u) => [u.name, u] as const))('responses on %s', (_name, upstream) => {
  it('answers, stores and lists a response', async () => {
    const client = gatewayOpenAI(gateway, upstream.config());
    const prompt = 'Say hello';
    const response = await client.responses.create({ model: upstream.model(), input: prompt });
    expectOpenAPIValid('Response', response);
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe(upstream.answerText(prompt));
    expect(response.usage?.total_tokens).toBeGreaterThan(0);

    const stored = await client.responses.retrieve(response.id);
    expectOpenAPIValid('Response', stored);
    expect(stored.output).toEqual(response.output);
    const items = await client.responses.inputItems.list(response.id);
    expect(items.data.map((item: any) => item.content[0].text)).toEqual([prompt]);
  });

  it('streams the Responses events, ending with one response.completed', async () => {
    const client = gatewayOpenAI(gateway, upstream.config());
    const prompt = 'Say hello';
    const stream = await client.responses.create({ model: upstream.model(), input: prompt, stream: true });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    for (const event of events) expectOpenAPIValid('ResponseStreamEvent', event);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.slice(0, 2).map((e) => e.type)).toEqual(['response.created', 'response.in_progress']);
    const terminal = events.filter((e) =>
      ['response.completed', 'response.failed', 'response.incomplete'].includes(e.type),
    );
    expect(terminal.map((e) => e.type)).toEqual(['response.completed']);
    expect(events.at(-1)).toBe(terminal[0]);
    const text = events
      .filter((e) => e.type === 'response.output_text.delta')
      .map((e) => e.delta)
      .join('');
    // (A provider's recorded stream need not say what its recorded JSON answer says.)
    expect(text.length).toBeGreaterThan(0);
    const done = events.find((e) => e.type === 'response.output_text.done');
    expect(done.text).toBe(text);
    const stored = await client.responses.retrieve(terminal[0].response.id);
    expect(stored.status).toBe('completed');
    expect(stored.output).toEqual(terminal[0].response.output);
    expect(terminal[0].response.output.at(-1).content[0].text).toBe(text);
  });
});
