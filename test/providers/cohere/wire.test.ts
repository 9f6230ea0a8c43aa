// The adapter against the fake Cohere over real HTTP: its requests are accepted, its SSE framing decoded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cohereAdapter } from '../../../src/providers/cohere/index.js';
import type { ChatCompletionChunk } from '../../../src/core/openai-types.js';
import { createSseDecoder } from '../../../src/providers/shared/sse-decoder.js';
import type { AdapterRequest, StreamOutput, UpstreamRequest } from '../../../src/providers/types.js';
import { startFakeCohere, type FakeCohere } from '../../fakes/cohere/server.js';
import { cohereRequest } from './helpers.js';
import { buildRequest, createStreamTranslator, parseResponse } from '../operations.js';

let fake: FakeCohere;
beforeAll(async () => {
  fake = await startFakeCohere();
});
afterAll(() => fake.close());

const req = (
  body: Record<string, unknown>,
  apiKey = 'co-test-key',
  endpoint: AdapterRequest['endpoint'] = 'chat',
) => cohereRequest(body, { endpoint, target: { api_key: apiKey, custom_host: fake.url } });

async function send(upstream: UpstreamRequest): Promise<Response> {
  return fetch(upstream.url, {
    method: upstream.method,
    headers: upstream.headers,
    body: upstream.body as string,
  });
}

async function streamOutputs(adapterReq: AdapterRequest): Promise<StreamOutput[]> {
  const res = await send(await buildRequest(cohereAdapter, adapterReq));
  expect(res.status).toBe(200);
  const decoder = createSseDecoder();
  const translator = createStreamTranslator(cohereAdapter, adapterReq);
  const out: StreamOutput[] = [];
  for await (const part of res.body!)
    for (const event of decoder.push(part)) out.push(...translator.push(event));
  for (const event of decoder.end()) out.push(...translator.push(event));
  return [...out, ...translator.end()];
}

describe('Cohere adapter against the fake Cohere API', () => {
  it('is refused with Cohere’s 401 shape for a wrong key, normalised by parseError', async () => {
    const adapterReq = req(
      { model: 'command-a-03-2025', messages: [{ role: 'user', content: 'hi' }] },
      'wrong',
    );
    const res = await send(await buildRequest(cohereAdapter, adapterReq));
    expect(res.status).toBe(401);
    const bodyText = await res.text();
    expect(JSON.parse(bodyText)).toMatchObject({ message: 'invalid api token' });
    const error = cohereAdapter.parseError(adapterReq, { status: res.status, headers: {}, bodyText });
    expect(error.type).toBe('authentication_error');
  });

  it('streams tool calls decoded from real SSE frames', async () => {
    fake.enqueue({ fixture: 'cohere-tool-call' });
    const outputs = await streamOutputs(
      req({
        model: 'command-a-03-2025',
        messages: [{ role: 'user', content: 'weather and attractions in SF' }],
        stream: true,
        tools: [
          { type: 'function', function: { name: 'weather', parameters: {} } },
          { type: 'function', function: { name: 'cityAttractions', parameters: {} } },
        ],
      }),
    );
    expect(outputs.at(-1)).toEqual({ type: 'done' });
    const calls = outputs
      .filter((o) => o.type === 'chunk')
      .flatMap((o) =>
        (o as { chunk: ChatCompletionChunk }).chunk.choices.flatMap((c) => c.delta.tool_calls ?? []),
      );
    expect(calls.filter((c) => c.id).map((c) => [c.index, c.function?.name])).toEqual([
      [0, 'weather'],
      [1, 'cityAttractions'],
    ]);
    expect(fake.requests.at(-1)!.body).toMatchObject({ stream: true, tools: [{}, {}] });
  });

  it('reports the error that ends a 200 stream', async () => {
    fake.enqueue({ streamErrorAfter: 4 });
    const outputs = await streamOutputs(
      req({ model: 'command-a-03-2025', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    );
    expect(outputs.filter((o) => o.type === 'chunk').length).toBeGreaterThan(0);
    const last = outputs.at(-1)!;
    expect(last.type).toBe('error');
    expect((last as Extract<StreamOutput, { type: 'error' }>).error.status).toBe(500);
  });

  it('embeds through /v2/embed', async () => {
    const adapterReq = req(
      { model: 'embed-v4.0', input: ['one', 'two', 'three'] },
      'co-test-key',
      'embeddings',
    );
    const res = await send(await buildRequest(cohereAdapter, adapterReq));
    expect(res.status).toBe(200);
    const out = parseResponse(cohereAdapter, adapterReq, {
      status: 200,
      headers: {},
      body: await res.json(),
    }) as {
      data: unknown[];
    };
    expect(out.data).toHaveLength(3);
  });
});
