/**
 * The simple cache as the router uses it: HIT / MISS / REFRESH / DISABLED, streams replayed as streams,
 * and only complete successful answers stored.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import {
  client,
  logsOf,
  openAIFakesForFile,
  rawChatStream,
  target,
  traceHeaders,
  userMessage,
} from '../routing/support.js';

let gateway: TestGateway;
const fake = openAIFakesForFile();

beforeAll(async () => {
  gateway = await startGateway();
});

afterAll(async () => {
  await gateway?.close();
});

const simple = { mode: 'simple' };

describe.concurrent('simple cache through the router', () => {
  it('MISS then HIT for a JSON answer; the upstream is called once', async () => {
    const upstream = await fake('cached');
    const sdk = client(gateway, target(upstream, { cache: simple }));
    const body = { model: 'gpt-4o-mini', messages: userMessage('cache me') };
    const first = await sdk.chat.completions.create(body).withResponse();
    expect(first.response.headers.get('x-gateway-cache-status')).toBe('MISS');
    const { traceId, headers } = traceHeaders();
    const second = await client(gateway, target(upstream, { cache: simple }), headers)
      .chat.completions.create(body)
      .withResponse();
    expect(second.response.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(second.data).toEqual(first.data);
    expect(upstream.requests).toHaveLength(1);
    const request = (await logsOf(gateway, traceId, 2)).find((r) => !r.is_attempt);
    expect(request).toMatchObject({ cache_status: 'HIT', status: 200, total_tokens: null });
  });

  it('MISS then HIT for a stream, replayed as a stream ending with [DONE]', async () => {
    const upstream = await fake('cached');
    const config = target(upstream, { cache: simple });
    const body = { model: 'gpt-4o-mini', messages: userMessage('stream and cache me') };
    const first = await rawChatStream(gateway, config, body);
    expect(first.headers.get('x-gateway-cache-status')).toBe('MISS');
    const second = await rawChatStream(gateway, config, body);
    expect(second.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(second.text).toBe('[cached] stream and cache me');
    expect(second.done).toBe(true);
    // The client did not ask for usage, so the replay carries none either.
    expect(second.events.some((e) => typeof e === 'object' && (e as { usage?: unknown }).usage)).toBe(false);
    const withUsage = await rawChatStream(gateway, config, {
      ...body,
      stream_options: { include_usage: true },
    });
    expect(withUsage.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(withUsage.events.at(-2)).toMatchObject({ usage: { total_tokens: expect.any(Number) } });
    expect(upstream.requests).toHaveLength(1);
  });

  it('x-gateway-cache-force-refresh → REFRESH: called again and stored', async () => {
    const upstream = await fake('cached');
    const body = { model: 'gpt-4o-mini', messages: userMessage('refresh me') };
    await client(gateway, target(upstream, { cache: simple })).chat.completions.create(body);
    const refreshed = await client(gateway, target(upstream, { cache: simple }), {
      'x-gateway-cache-force-refresh': 'true',
    })
      .chat.completions.create(body)
      .withResponse();
    expect(refreshed.response.headers.get('x-gateway-cache-status')).toBe('REFRESH');
    expect(upstream.requests).toHaveLength(2);
    const after = await client(gateway, target(upstream, { cache: simple }))
      .chat.completions.create(body)
      .withResponse();
    expect(after.response.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(after.data.id).toBe(refreshed.data.id);
  });

  it('stores neither a failure nor a stream completed by another target', async () => {
    const upstream = await fake('cached');
    const spare = await fake('spare');
    upstream.enqueue({ status: 503 });
    const config = target(upstream, { cache: simple });
    const body = { model: 'gpt-4o-mini', messages: userMessage('not a failure') };
    await expect(client(gateway, config).chat.completions.create(body)).rejects.toBeInstanceOf(
      OpenAI.APIError,
    );
    const next = await client(gateway, config).chat.completions.create(body).withResponse();
    expect(next.response.headers.get('x-gateway-cache-status')).toBe('MISS');

    upstream.enqueue({ chunks: 10, cutAfter: 5 });
    spare.enqueue({ text: ' rest' });
    const tree = {
      strategy: { mode: 'fallback' },
      cache: simple,
      targets: [target(upstream), target(spare)],
    };
    const streamBody = { model: 'gpt-4o-mini', messages: userMessage('cut me') };
    const broken = await rawChatStream(gateway, tree, streamBody);
    expect(broken.done).toBe(true);
    const again = await rawChatStream(gateway, tree, streamBody);
    expect(again.headers.get('x-gateway-cache-status')).toBe('MISS');
  });

  it('DISABLED without a cache; the namespace header partitions the cache', async () => {
    const upstream = await fake('cached');
    const body = { model: 'gpt-4o-mini', messages: userMessage('namespaced') };
    const plain = await client(gateway, target(upstream)).chat.completions.create(body).withResponse();
    expect(plain.response.headers.get('x-gateway-cache-status')).toBe('DISABLED');
    const config = target(upstream, { cache: simple });
    await client(gateway, config, { 'x-gateway-cache-namespace': 'a' }).chat.completions.create(body);
    const other = await client(gateway, config, { 'x-gateway-cache-namespace': 'b' })
      .chat.completions.create(body)
      .withResponse();
    expect(other.response.headers.get('x-gateway-cache-status')).toBe('MISS');
    const same = await client(gateway, config, { 'x-gateway-cache-namespace': 'a' })
      .chat.completions.create(body)
      .withResponse();
    expect(same.response.headers.get('x-gateway-cache-status')).toBe('HIT');
  });

  it.each([false, true])(
    'max_age expires an answer (stream: %s): MISS, HIT, then MISS after max_age',
    async (stream) => {
      const upstream = await fake('cached');
      // max_age counts from when the answer was stored: 3 s leaves room for a loaded machine between the
      // first answer and the second request's lookup, which must come before it.
      const config = target(upstream, { cache: { mode: 'simple', max_age: 3 } });
      const sdk = client(gateway, config);
      const ask = async () => {
        const body = { model: 'gpt-4o-mini', messages: userMessage(`expiring ${stream}`) };
        if (!stream) return (await sdk.chat.completions.create(body).withResponse()).response;
        const { data, response } = await sdk.chat.completions
          .create({ ...body, stream: true })
          .withResponse();
        for await (const _chunk of data) {
          // drain the stream
        }
        return response;
      };
      expect((await ask()).headers.get('x-gateway-cache-status')).toBe('MISS');
      expect((await ask()).headers.get('x-gateway-cache-status')).toBe('HIT');
      await new Promise((resolve) => setTimeout(resolve, 3200));
      expect((await ask()).headers.get('x-gateway-cache-status')).toBe('MISS');
      expect(upstream.requests).toHaveLength(2);
    },
  );

  it.each([false, true])(
    "a request's max_age bounds the age of what answers it (stream: %s), whatever the config that stored it",
    async (stream) => {
      const upstream = await fake('cached');
      const ask = async (maxAge: number) => {
        const sdk = client(gateway, target(upstream, { cache: { mode: 'simple', max_age: maxAge } }));
        const body = { model: 'gpt-4o-mini', messages: userMessage(`max_age lowered ${stream}`) };
        if (!stream) return (await sdk.chat.completions.create(body).withResponse()).response;
        const { data, response } = await sdk.chat.completions
          .create({ ...body, stream: true })
          .withResponse();
        for await (const _chunk of data) {
          // drain the stream
        }
        return response;
      };
      // Stored for a day; then the config's max_age is lowered to 1 s.
      expect((await ask(86_400)).headers.get('x-gateway-cache-status')).toBe('MISS');
      expect((await ask(86_400)).headers.get('x-gateway-cache-status')).toBe('HIT');
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect((await ask(1)).headers.get('x-gateway-cache-status')).toBe('MISS');
      expect(upstream.requests).toHaveLength(2);
      // The answer stored by the lowered config answers within its own max_age.
      expect((await ask(60)).headers.get('x-gateway-cache-status')).toBe('HIT');
    },
  );

  it('headers the config forwards to the provider partition the cache by their values', async () => {
    const upstream = await fake('cached');
    const config = target(upstream, { cache: simple, forward_headers: ['X-Tenant'] });
    const body = { model: 'gpt-4o-mini', messages: userMessage('whose answer?') };
    const statuses: Array<string | null> = [];
    for (const tenant of ['a', 'b', 'a', 'b']) {
      const { response } = await client(gateway, config, { 'x-tenant': tenant })
        .chat.completions.create(body)
        .withResponse();
      statuses.push(response.headers.get('x-gateway-cache-status'));
    }
    expect(statuses).toEqual(['MISS', 'MISS', 'HIT', 'HIT']);
    expect(upstream.requests.map((r) => r.headers['x-tenant'])).toEqual(['a', 'b']);
  });

  it('the namespace partitions streamed answers too', async () => {
    const upstream = await fake('cached');
    const config = target(upstream, { cache: simple });
    const body = { model: 'gpt-4o-mini', messages: userMessage('namespaced stream'), stream: true as const };
    const statuses: Array<string | null> = [];
    for (const namespace of ['a', 'b', 'a']) {
      const { data, response } = await client(gateway, config, { 'x-gateway-cache-namespace': namespace })
        .chat.completions.create(body)
        .withResponse();
      let text = '';
      for await (const chunk of data) text += chunk.choices[0]?.delta?.content ?? '';
      expect(text).toBe('[cached] namespaced stream');
      statuses.push(response.headers.get('x-gateway-cache-status'));
    }
    expect(statuses).toEqual(['MISS', 'MISS', 'HIT']);
    expect(upstream.requests).toHaveLength(2);
  });

  it('cache.mode semantic without an embedding model → 400 naming it (test/e2e/semantic-cache.test.ts has the rest)', async () => {
    const upstream = await fake('cached');
    const error = await client(gateway, target(upstream, { cache: { mode: 'semantic' } }))
      .chat.completions.create({ model: 'gpt-4o-mini', messages: userMessage('x') })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.APIError>).param).toBe('config.cache.embedding');
    expect(upstream.requests).toHaveLength(0);
  });

  it('cache.mode semantic without an embedding model → the same 400 on every endpoint and request', async () => {
    const upstream = await fake('cached');
    const sdk = client(gateway, target(upstream, { cache: { mode: 'semantic' } }));
    const refusals = [
      // Native on this target: the Responses API, and a request the cache could never compare by meaning.
      () => sdk.responses.create({ model: 'gpt-4o-mini', input: 'x' }),
      () =>
        sdk.chat.completions.create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'x', name: 'someone' }],
        }),
      () => sdk.embeddings.create({ model: 'text-embedding-3-small', input: 'x' }),
      () => sdk.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: ['x', 'y'] }),
    ];
    for (const refused of refusals) {
      const error = await refused().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.APIError>).param).toBe('config.cache.embedding');
      expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('invalid_config');
    }
    expect(upstream.requests).toHaveLength(0);
  });

  it('cache.mode semantic caches exactly what it cannot compare by meaning', async () => {
    const upstream = await fake('cached');
    // The embedding target is never asked: an embeddings request is not compared by meaning.
    const embedding = { virtual_key: 'never-asked' };
    const sdk = client(gateway, target(upstream, { cache: { mode: 'semantic', embedding } }));
    const statuses: Array<string | null> = [];
    for (let i = 0; i < 2; i++) {
      const { response } = await sdk.embeddings
        .create({ model: 'text-embedding-3-small', input: 'exactly cached' })
        .withResponse();
      statuses.push(response.headers.get('x-gateway-cache-status'));
    }
    expect(statuses).toEqual(['MISS', 'HIT']);
    expect(upstream.requests).toHaveLength(1);
  });
});
