/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// Fallback away from every native provider: a `fallback` config whose first target is the provider's fake,
// made to fail in the provider's own way (an error event in a 200 stream, before or after some content, or
// its error shape with a 5xx/429), and whose second target is the fake OpenAI. The client must get the
// fallback's whole answer, or the partial answer continued on the fallback — never a truncated success.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import {
  PROVIDER_CASE_NAMES,
  startProviderFakes,
  type ProviderCase,
  type ProviderFakes,
} from '../helpers/provider-targets.js';
import { openAICompatibleAdapters } from '../../src/providers/openai-compatible/adapters.js';
import { listAdapters } from '../../src/providers/registry.js';
import { rawChatStream } from '../routing/support.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';

let gateway: TestGateway;
let providers: ProviderFakes;
let fallback: FakeUpstream;

beforeAll(async () => {
  [gateway, providers, fallback] = await Promise.all([
    startGateway(),
    startProviderFakes(),
    startFakeOpenAI({ name: 'fallback' }),
  ]);
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([providers?.close(), fallback?.close()]);
});

beforeEach(() => fallback.reset());

function fallbackConfig(c: ProviderCase): Record<string, unknown> {
  return {
    strategy: { mode: 'fallback' },
    targets: [
      { provider: c.provider, ...c.keys },
      { provider: 'openai', api_key: 'sk-fallback', custom_host: fallback.url },
    ],
  };
}

describe('the table', () => {
  it('has an entry for every native adapter, vertex-ai with a Gemini and a Claude model', () => {
    const compatible = new Set(openAICompatibleAdapters.map((adapter) => adapter.id));
    const native = listAdapters().filter((adapter) => !compatible.has(adapter.id));
    expect(new Set(providers.cases.map((c) => c.provider))).toEqual(new Set(native.map((a) => a.id)));
    expect(providers.cases.map((c) => c.name)).toEqual(PROVIDER_CASE_NAMES);
    const vertex = providers.cases.filter((c) => c.provider === 'vertex-ai').map((c) => c.model);
    expect(vertex.some((model) => model.startsWith('gemini'))).toBe(true);
    expect(vertex.some((model) => model.startsWith('claude'))).toBe(true);
  });
});

describe.each(PROVIDER_CASE_NAMES)('fallback from %s to openai', (name) => {
  it('a 200 stream failing before any content is answered whole by the fallback', async () => {
    const c = providers.byName(name);
    const before = c.calls();
    c.failStreamBeforeContent();
    const { data: stream, response } = await gatewayOpenAI(gateway, fallbackConfig(c))
      .chat.completions.create({
        model: c.model,
        messages: [{ role: 'user', content: 'Say hello' }],
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    expect(response.headers.get('x-gateway-last-used-option-index')).toBe('targets[1]');
    expect(response.headers.get('x-gateway-provider')).toBe('openai');
    let text = '';
    const finishes: string[] = [];
    let usage: unknown;
    // The SDK ends this loop normally only on a clean end of stream; an in-band error would throw.
    for await (const chunk of stream) {
      expectOpenAPIValid('CreateChatCompletionStreamResponse', chunk);
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.choices[0]?.finish_reason) finishes.push(chunk.choices[0].finish_reason);
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe('[fallback] Say hello');
    expect(finishes).toEqual(['stop']);
    expect(usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) });
    expect(c.calls()).toBe(before + 1);
    expect(fallback.requests).toHaveLength(1);
    expect((fallback.requests[0]!.body as any).messages).toEqual([{ role: 'user', content: 'Say hello' }]);

    // The SDK ends its loop quietly on a stream cut short too; the wire shows the [DONE] itself.
    c.failStreamBeforeContent();
    const raw = await rawChatStream(gateway, fallbackConfig(c), {
      model: c.model,
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    expect(raw.done).toBe(true);
    expect(raw.text).toBe('[fallback] Say hello');
    expect(raw.headers.get('x-gateway-last-used-option-index')).toBe('targets[1]');
    expect(c.calls()).toBe(before + 2);
  });

  it('a 200 stream failing after its role-only opening is answered whole by the fallback', async (ctx) => {
    const c = providers.byName(name);
    if (!c.failStreamAfterRole) return ctx.skip();
    c.failStreamAfterRole();
    const stream = await rawChatStream(gateway, fallbackConfig(c), {
      model: c.model,
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    expect(stream.status).toBe(200);
    expect(stream.done).toBe(true);
    expect(stream.text).toBe('[fallback] Say hello');
    // the response head went out with the role chunk, so it names the first target (docs/routing.md)
    expect(stream.headers.get('x-gateway-last-used-option-index')).toBe('targets[0]');
    const chunks = stream.events.filter((e) => e !== '[DONE]') as any[];
    expect(chunks.filter((chunk) => chunk.error)).toEqual([]);
    expect(chunks.filter((chunk) => chunk.choices[0]?.delta?.role)).toHaveLength(1);
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    // nothing to continue from: the fallback is asked the original question
    expect((fallback.requests[0]!.body as any).messages).toEqual([{ role: 'user', content: 'Say hello' }]);
  });

  it.each([503, 429] as const)(
    "a plain call answered with the provider's own %i is answered by the fallback",
    async (status) => {
      const c = providers.byName(name);
      c.failWithStatus(status);
      const before = c.calls();
      const { data: completion, response } = await gatewayOpenAI(gateway, fallbackConfig(c))
        .chat.completions.create({ model: c.model, messages: [{ role: 'user', content: 'Say hello' }] })
        .withResponse();
      expectOpenAPIValid('CreateChatCompletionResponse', completion);
      expect(completion.choices[0]!.message.content).toBe('[fallback] Say hello');
      expect(response.headers.get('x-gateway-last-used-option-index')).toBe('targets[1]');
      expect(c.calls()).toBe(before + 1);
      expect(fallback.requests).toHaveLength(1);
    },
  );

  it('a 200 stream failing after some content is continued on the fallback and ends with [DONE]', async () => {
    const c = providers.byName(name);
    const prompt = 'Tell me more';
    const partial = c.failStreamAfterContent(prompt);
    fallback.enqueue({ text: ' and the rest.' });
    const stream = await rawChatStream(gateway, fallbackConfig(c), {
      model: c.model,
      messages: [{ role: 'user', content: prompt }],
    });
    expect(stream.status).toBe(200);
    // the answer went out from the first target: the headers name it
    expect(stream.headers.get('x-gateway-last-used-option-index')).toBe('targets[0]');
    expect(stream.events.filter((e: any) => e !== '[DONE]' && e.error)).toEqual([]);
    expect(stream.done).toBe(true);
    expect(stream.text).toBe(`${partial} and the rest.`);
    const chunks = stream.events.filter((e) => e !== '[DONE]') as any[];
    for (const chunk of chunks) expectOpenAPIValid('CreateChatCompletionStreamResponse', chunk);
    // one answer: one id, one role delta, one finish
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    expect(chunks.filter((chunk) => chunk.choices[0]?.delta?.role)).toHaveLength(1);
    expect(chunks.flatMap((chunk) => chunk.choices[0]?.finish_reason ?? [])).toEqual(['stop']);
    // the fallback was asked to go on from the partial answer
    expect(fallback.requests).toHaveLength(1);
    const sent = (fallback.requests[0]!.body as any).messages;
    expect(sent.slice(0, 2)).toEqual([
      { role: 'user', content: prompt },
      { role: 'assistant', content: partial },
    ]);
    expect(sent[2]).toMatchObject({ role: 'user' });
  });
});
