/**
 * Routing and resilience as users write configs: the `openai` SDK (or fetch) against a real gateway on
 * loopback, fake providers speaking OpenAI's wire format.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { client, openAIFakesForFile, postChat, target, userMessage } from '../routing/support.js';

let gateway: TestGateway;
const fake = openAIFakesForFile();

beforeAll(async () => {
  gateway = await startGateway();
});

afterAll(async () => {
  await gateway?.close();
});

const chat = { model: 'gpt-4o-mini', messages: userMessage('hello there') };

describe.concurrent('retry honouring the provider', () => {
  it('a Retry-After longer than the gateway waits (60 s) is not slept: the fallback answers at once', async () => {
    const primary = await fake('primary');
    const backup = await fake('backup');
    primary.enqueue({ status: 429, headers: { 'retry-after': '90' } });
    const config = {
      strategy: { mode: 'fallback' },
      targets: [target(primary, { retry: { attempts: 2, use_retry_after_headers: true } }), target(backup)],
    };
    const started = performance.now();
    const { data, response } = await client(gateway, config).chat.completions.create(chat).withResponse();
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(data.choices[0].message.content).toBe('[backup] hello there');
    expect(primary.requests).toHaveLength(1);
    expect(response.headers.get('x-gateway-last-used-option-index')).toBe('targets[1]');
    expect(response.headers.get('x-gateway-retry-attempt-count')).toBe('0');
  });

  it('without a fallback, the provider 429 and its Retry-After reach the client at once', async () => {
    const primary = await fake('primary');
    primary.enqueue({ status: 429, headers: { 'retry-after-ms': '75000' } });
    const config = target(primary, { retry: { attempts: 3, use_retry_after_headers: true } });
    const started = performance.now();
    const response = await postChat(gateway, config, chat);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(response.status).toBe(429);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('rate_limit_exceeded');
    expect(primary.requests).toHaveLength(1);
  });
});

describe.concurrent('conditional routing on metadata', () => {
  /** Two named targets; `smart` when `query` matches, else `cheap`. */
  async function routedBy(query: Record<string, unknown>, metadata: Record<string, string>) {
    const smart = await fake('smart');
    const cheap = await fake('cheap');
    const config = {
      strategy: { mode: 'conditional', conditions: [{ query, then: 'smart' }], default: 'cheap' },
      targets: [target(smart, { name: 'smart' }), target(cheap, { name: 'cheap' })],
    };
    const headers = { 'x-gateway-metadata': JSON.stringify(metadata) };
    const { data } = await client(gateway, config, headers).chat.completions.create(chat).withResponse();
    return data.choices[0].message.content?.startsWith('[smart]') ? 'smart' : 'cheap';
  }

  it('$gt, $gte, $lt and $lte with a number compare a metadata value as the number it writes', async () => {
    expect(await routedBy({ 'metadata.level': { $gte: 3 } }, { level: '5' })).toBe('smart');
    expect(await routedBy({ 'metadata.level': { $gt: 9 } }, { level: '10' })).toBe('smart');
    expect(await routedBy({ 'metadata.level': { $lt: 9 } }, { level: '10' })).toBe('cheap');
    expect(await routedBy({ 'metadata.level': { $lte: 2.5 } }, { level: '2.5' })).toBe('smart');
    expect(await routedBy({ 'metadata.level': { $gt: 1 } }, { level: 'gold' })).toBe('cheap');
    expect(await routedBy({ 'metadata.level': { $gt: 1 } }, {})).toBe('cheap');
  });

  it('a $regex written to backtrack answers at once on a value written to make it (linear-time engine)', async () => {
    const started = performance.now();
    const x = `${'a'.repeat(27)}!`;
    expect(await routedBy({ 'metadata.x': { $regex: '^(a+)+$' } }, { x })).toBe('cheap');
    expect(await routedBy({ 'metadata.x': { $regex: '^(a+)+$' } }, { x: 'aaa' })).toBe('smart');
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('a $regex the linear-time engine cannot run is refused with the config, naming its place', async () => {
    const smart = await fake('smart');
    const config = {
      strategy: {
        mode: 'conditional',
        conditions: [{ query: { 'metadata.x': { $regex: '(?<=a)b' } }, then: 'smart' }],
        default: 'smart',
      },
      targets: [target(smart, { name: 'smart' })],
    };
    const response = await postChat(gateway, config, chat);
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { code: string; param: string; message: string } };
    expect(error.code).toBe('invalid_config');
    expect(error.param).toBe('config.strategy.conditions[0].query["metadata.x"].$regex');
    expect(error.message).toContain('lookaround');
    expect(smart.requests).toHaveLength(0);
  });
});

describe.concurrent('loadbalance weights', () => {
  it('a loadbalance node whose weights are all 0 is refused with the config, not when a fallback reaches it', async () => {
    const primary = await fake('primary');
    const spare = await fake('spare');
    const config = {
      strategy: { mode: 'fallback' },
      targets: [
        target(primary),
        {
          strategy: { mode: 'loadbalance' },
          targets: [target(spare, { weight: 0 }), target(spare, { weight: 0 })],
        },
      ],
    };
    const response = await postChat(gateway, config, chat);
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { code: string; param: string; message: string } };
    expect(error.code).toBe('invalid_config');
    expect(error.param).toBe('config.targets[1].targets');
    expect(error.message).toContain('positive weight');
    expect(primary.requests).toHaveLength(0);
  });
});

describe.concurrent('conditional routing on the request path', () => {
  it("routes on url.pathname, Portkey's name for the request path", async () => {
    const embedder = await fake('embedder');
    const chatter = await fake('chatter');
    const config = {
      strategy: {
        mode: 'conditional',
        conditions: [{ query: { 'url.pathname': { $regex: '/embeddings$' } }, then: 'embed' }],
        default: 'chat',
      },
      targets: [target(embedder, { name: 'embed' }), target(chatter, { name: 'chat' })],
    };
    const sdk = client(gateway, config);
    const { response } = await sdk.embeddings
      .create({ model: 'text-embedding-3-small', input: 'hello' })
      .withResponse();
    expect(response.headers.get('x-gateway-last-used-option-index')).toBe('targets[0]');
    const { data } = await sdk.chat.completions.create(chat).withResponse();
    expect(data.choices[0].message.content).toBe('[chatter] hello there');
    expect(embedder.requests.map((r) => r.path)).toEqual(['/v1/embeddings']);
    expect(chatter.requests.map((r) => r.path)).toEqual(['/v1/chat/completions']);
  });
});

describe.concurrent('circuit breaker under loadbalance', () => {
  it('a drawn target whose circuit is open is put aside and another is drawn, as Portkey removes it from the pool', async () => {
    const down = await fake('down');
    const healthy = await fake('healthy');
    down.enqueue({ status: 503 });
    const config = {
      strategy: { mode: 'loadbalance' },
      targets: [
        target(down, {
          weight: 1,
          cb_config: { failure_threshold: 1, cooldown_interval: 60_000 },
        }),
        // Drawn about once in a million: the first draw is the failing target.
        target(healthy, { weight: 0.000001 }),
      ],
    };
    const sdk = client(gateway, config);
    // The call that opens the circuit fails: a loadbalance node does not fall back.
    const opening = await sdk.chat.completions.create(chat).catch((e: unknown) => e);
    expect(opening).toBeInstanceOf(Error);
    expect(down.requests).toHaveLength(1);
    for (let i = 0; i < 5; i++) {
      const { data, response } = await sdk.chat.completions.create(chat).withResponse();
      expect(data.choices[0].message.content).toBe('[healthy] hello there');
      expect(response.headers.get('x-gateway-last-used-option-index')).toBe('targets[1]');
    }
    expect(down.requests).toHaveLength(1);
    expect(healthy.requests).toHaveLength(5);
  });

  it('when every target of the pool is open, the answer is 503 circuit_open', async () => {
    const a = await fake('a');
    const b = await fake('b');
    a.enqueue({ status: 503 });
    b.enqueue({ status: 503 });
    const config = {
      strategy: { mode: 'loadbalance' },
      cb_config: { failure_threshold: 1, cooldown_interval: 60_000 },
      targets: [target(a), target(b)],
    };
    // Two failing calls open both circuits (a draw that lands on an open one moves to the other).
    await postChat(gateway, config, chat);
    await postChat(gateway, config, chat);
    expect(a.requests.length + b.requests.length).toBe(2);
    const response = await postChat(gateway, config, chat);
    expect(response.status).toBe(503);
    const { error } = (await response.json()) as { error: { code: string } };
    expect(error.code).toBe('circuit_open');
    expect(a.requests.length + b.requests.length).toBe(2);
  });
});

describe.concurrent('override_params shared by the calls of several endpoints', () => {
  it('sends each endpoint only the parameters it has, and every parameter no endpoint knows', async () => {
    const upstream = await fake('overrides-shared');
    const config = target(upstream, {
      override_params: { temperature: 0.2, max_tokens: 64, dimensions: 256 },
    });
    const sdk = client(gateway, config);
    await sdk.embeddings.create({ model: 'text-embedding-3-small', input: 'hello' });
    const embedding = upstream.requests.at(-1)?.body as Record<string, unknown>;
    // Chat's parameters would be refused by the provider's embeddings API.
    expect(embedding).toMatchObject({ dimensions: 256 });
    expect(embedding).not.toHaveProperty('temperature');
    expect(embedding).not.toHaveProperty('max_tokens');
    await sdk.chat.completions.create({ model: 'gpt-4o-mini', messages: userMessage('hi') });
    const chatBody = upstream.requests.at(-1)?.body as Record<string, unknown>;
    expect(chatBody).toMatchObject({ temperature: 0.2, max_tokens: 64 });
    expect(chatBody).not.toHaveProperty('dimensions');
  });
});
