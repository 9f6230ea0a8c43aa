/**
 * Routing strategies end to end: the `openai` SDK against a real gateway and fake upstreams, checking
 * which upstream answered and what the response headers and log records say.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream } from '../fakes/openai/server.js';
import { postWithConfig, startGateway, type TestGateway } from '../helpers/gateway.js';
import {
  client,
  type Config,
  logsOf,
  openAIFakesForFile,
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

const chat = { model: 'gpt-4o-mini', messages: userMessage('hi') };

/** Who answered: the fake's name in the reply text. */
async function answeredBy(config: Config, extra: Record<string, unknown> = {}, headers = {}) {
  const answer = await client(gateway, config, headers).chat.completions.create({ ...chat, ...extra });
  return /^\[([^\]]+)\]/.exec(answer.choices[0].message.content ?? '')?.[1];
}

/** Runs `count` calls, `parallel` at a time. */
async function many<T>(count: number, parallel: number, call: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await call(i);
      }
    }),
  );
  return results;
}

describe.concurrent('loadbalance', () => {
  it('splits 3:1 by weight (4,000 requests, within ±3 points of 75/25)', async () => {
    const a = await fake('a');
    const b = await fake('b');
    const config = {
      strategy: { mode: 'loadbalance' },
      targets: [target(a, { weight: 3 }), target(b, { weight: 1 })],
    };
    const sdk = client(gateway, config);
    const paths = await many(4000, 32, async () => {
      const { response } = await sdk.chat.completions.create(chat).withResponse();
      return response.headers.get('x-gateway-last-used-option-index');
    });
    const shareA = (a.requests.length / 4000) * 100;
    expect(a.requests.length + b.requests.length).toBe(4000);
    expect(Math.abs(shareA - 75)).toBeLessThanOrEqual(3);
    expect(paths.filter((p) => p === 'targets[0]')).toHaveLength(a.requests.length);
  });

  it('never chooses a target of weight 0', async () => {
    const a = await fake('a');
    const zero = await fake('zero');
    const c = await fake('c');
    const config = {
      strategy: { mode: 'loadbalance' },
      targets: [target(a), target(zero, { weight: 0 }), target(c, { weight: 2 })],
    };
    const sdk = client(gateway, config);
    await many(60, 8, () => sdk.chat.completions.create(chat));
    expect(zero.requests).toHaveLength(0);
    expect(a.requests.length + c.requests.length).toBe(60);
  });

  it('refuses a loadbalance whose weights are all 0 with a clear 400', async () => {
    const a = await fake('a');
    const config = {
      strategy: { mode: 'loadbalance' },
      targets: [target(a, { weight: 0 }), target(a, { weight: 0 })],
    };
    const error = await client(gateway, config)
      .chat.completions.create(chat)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.APIError>).message).toContain('positive weight');
    expect(a.requests).toHaveLength(0);
  });

  it('a failing loadbalanced child is not retried elsewhere unless a fallback node says so', async () => {
    const down = await fake('down', { defaultBehaviour: { status: 503 } });
    const spare = await fake('spare');
    const alone = {
      strategy: { mode: 'loadbalance' },
      targets: [target(down, { weight: 1 }), target(spare, { weight: 0 })],
    };
    const error = await client(gateway, alone)
      .chat.completions.create(chat)
      .catch((e: unknown) => e);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(503);

    const nested = {
      strategy: { mode: 'fallback' },
      targets: [alone, target(spare)],
    };
    const { response, data } = await client(gateway, nested).chat.completions.create(chat).withResponse();
    expect(data.choices[0].message.content).toBe('[spare] hi');
    expect(response.headers.get('x-gateway-last-used-option-index')).toBe('targets[1]');
  });
});

describe.concurrent('nested trees and inheritance', () => {
  it('reports the JSON path of the answering target in a nested tree, and records every attempt', async () => {
    const down = await fake('down', { defaultBehaviour: { status: 500 } });
    const deep = await fake('deep');
    const config = {
      strategy: { mode: 'fallback' },
      targets: [
        target(down),
        {
          strategy: { mode: 'loadbalance' },
          targets: [target(down, { weight: 0 }), target(deep, { weight: 1 })],
        },
      ],
    };
    const { traceId, headers } = traceHeaders();
    const { response, data } = await client(gateway, config, headers)
      .chat.completions.create(chat)
      .withResponse();
    expect(data.choices[0].message.content).toBe('[deep] hi');
    expect(response.headers.get('x-gateway-last-used-option-index')).toBe('targets[1].targets[1]');
    expect(response.headers.get('x-gateway-provider')).toBe('openai');
    expect(response.headers.get('x-gateway-retry-attempt-count')).toBe('0');
    const records = await logsOf(gateway, traceId, 3);
    expect(records.filter((r) => r.is_attempt).map((r) => [r.target, r.status])).toEqual([
      ['targets[0]', 500],
      ['targets[1].targets[1]', 200],
    ]);
    const request = records.find((r) => !r.is_attempt);
    expect(records.filter((r) => r.is_attempt).every((r) => r.parent_span_id === request?.span_id)).toBe(
      true,
    );
  });

  it('a target that cannot be resolved after a call was made: the call keeps its record, the error names the target', async () => {
    const down = await fake('down', { defaultBehaviour: { status: 503 } });
    const config = {
      strategy: { mode: 'fallback' },
      targets: [target(down), { virtual_key: 'no-such-key' }],
    };
    const { traceId, headers } = traceHeaders();
    const error = (await client(gateway, config, headers)
      .chat.completions.create(chat)
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(404);
    expect(error.headers?.get('x-gateway-last-used-option-index')).toBe('targets[1]');
    expect(down.requests).toHaveLength(1);
    const records = await logsOf(gateway, traceId, 3);
    expect(records.find((r) => !r.is_attempt)).toMatchObject({ target: 'targets[1]', status: 404 });
    expect(records.filter((r) => r.is_attempt).map((r) => [r.target, r.status])).toEqual([
      ['targets[0]', 503],
      ['targets[1]', 404],
    ]);
  });

  it('children inherit retry, request_timeout, override_params (merged) and forward_headers', async () => {
    const flaky = await fake('flaky');
    flaky.enqueue({ status: 502 });
    const config = {
      strategy: { mode: 'fallback' },
      retry: { attempts: 1 },
      override_params: { temperature: 0.3, model: 'parent-model' },
      forward_headers: ['x-team'],
      targets: [target(flaky, { override_params: { model: 'child-model' } })],
    };
    const answer = await client(gateway, config, { 'x-team': 'blue' }).chat.completions.create(chat);
    expect(answer.model).toBe('child-model');
    expect(flaky.requests).toHaveLength(2);
    const sent = flaky.requests[1];
    expect(sent.body).toMatchObject({ model: 'child-model', temperature: 0.3 });
    expect(sent.headers['x-team']).toBe('blue');
  });

  it('a parent request_timeout bounds its children; a child may set its own', async () => {
    const slow = await fake('slow', { defaultBehaviour: { firstByteDelayMs: 1500 } });
    const fast = await fake('fast');
    const config = {
      strategy: { mode: 'fallback' },
      request_timeout: 500,
      targets: [target(slow), target(slow, { request_timeout: 5000 }), target(fast)],
    };
    const started = Date.now();
    expect(await answeredBy(config)).toBe('slow');
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(2000);
    expect(elapsed).toBeLessThan(3500);
    expect(slow.requests).toHaveLength(2);
  });

  it('fallback honours strategy.on_status_codes', async () => {
    const unauthorized = await fake('unauthorized', { defaultBehaviour: { status: 401 } });
    const spare = await fake('spare');
    const only5xx = {
      strategy: { mode: 'fallback', on_status_codes: [500, 503] },
      targets: [target(unauthorized), target(spare)],
    };
    const error = await client(gateway, only5xx)
      .chat.completions.create(chat)
      .catch((e: unknown) => e);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(401);
    expect(spare.requests).toHaveLength(0);
    const with401 = { ...only5xx, strategy: { mode: 'fallback', on_status_codes: [401] } };
    expect(await answeredBy(with401)).toBe('spare');
  });

  it("fallback honours the node's own on_status_codes; strategy.on_status_codes wins when both are set", async () => {
    const unauthorized = await fake('unauthorized', { defaultBehaviour: { status: 401 } });
    const spare = await fake('spare');
    const targets = [target(unauthorized), target(spare)];
    const only5xx = { strategy: { mode: 'fallback' }, on_status_codes: [500, 503], targets };
    const error = await client(gateway, only5xx)
      .chat.completions.create(chat)
      .catch((e: unknown) => e);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(401);
    expect(spare.requests).toHaveLength(0);

    expect(await answeredBy({ ...only5xx, on_status_codes: [401] })).toBe('spare');
    expect(spare.requests).toHaveLength(1);

    const both = { strategy: { mode: 'fallback', on_status_codes: [500] }, on_status_codes: [401], targets };
    const overruled = await client(gateway, both)
      .chat.completions.create(chat)
      .catch((e: unknown) => e);
    expect((overruled as InstanceType<typeof OpenAI.APIError>).status).toBe(401);
    expect(spare.requests).toHaveLength(1);

    // A fallback node in targets reads its own list; its parent's does not pass down.
    const nested = {
      strategy: { mode: 'fallback' },
      on_status_codes: [500],
      targets: [{ ...only5xx, on_status_codes: [401] }],
    };
    expect(await answeredBy(nested)).toBe('spare');
    const listless = { strategy: { mode: 'fallback' }, targets };
    expect(await answeredBy({ ...nested, targets: [listless] })).toBe('spare');
  });
});

describe.concurrent('conditional', () => {
  let sites: Record<string, FakeUpstream>;
  const conditional = (conditions: unknown[], fallbackName = 'default'): Config => ({
    strategy: { mode: 'conditional', conditions, default: fallbackName },
    targets: Object.entries(sites).map(([name, f]) => target(f, { name })),
  });

  beforeAll(async () => {
    sites = {
      free: await fake('free'),
      pro: await fake('pro'),
      eu: await fake('eu'),
      default: await fake('default'),
    };
  });

  it('$eq over metadata', async () => {
    const config = conditional([{ query: { 'metadata.plan': { $eq: 'pro' } }, then: 'pro' }]);
    expect(await answeredBy(config, {}, { 'x-gateway-metadata': '{"plan":"pro"}' })).toBe('pro');
    expect(await answeredBy(config, {}, { 'x-gateway-metadata': '{"plan":"free"}' })).toBe('default');
    expect(await answeredBy(config)).toBe('default');
  });

  it('$in and $nin over params', async () => {
    const config = conditional([
      { query: { 'params.model': { $in: ['gpt-4o', 'gpt-4.1'] } }, then: 'pro' },
      { query: { 'params.model': { $nin: ['gpt-4o-mini'] } }, then: 'eu' },
    ]);
    expect(await answeredBy(config, { model: 'gpt-4.1' })).toBe('pro');
    expect(await answeredBy(config, { model: 'o3' })).toBe('eu');
    expect(await answeredBy(config, { model: 'gpt-4o-mini' })).toBe('default');
  });

  it('$gt and $lte over a numeric param', async () => {
    const config = conditional([
      { query: { 'params.temperature': { $gt: 1 } }, then: 'free' },
      { query: { 'params.temperature': { $lte: 0.2 } }, then: 'pro' },
    ]);
    expect(await answeredBy(config, { temperature: 1.5 })).toBe('free');
    expect(await answeredBy(config, { temperature: 0.1 })).toBe('pro');
    expect(await answeredBy(config, { temperature: 0.7 })).toBe('default');
  });

  it('$regex over the url, and $and / $or / $exists combined', async () => {
    const byUrl = conditional([{ query: { url: { $regex: '/chat/completions$' } }, then: 'eu' }]);
    expect(await answeredBy(byUrl)).toBe('eu');
    const combined = conditional([
      {
        query: {
          $and: [
            { 'metadata.region': { $eq: 'eu' } },
            { $or: [{ 'params.user': { $exists: true } }, { 'metadata.plan': 'pro' }] },
          ],
        },
        then: 'eu',
      },
    ]);
    const eu = { 'x-gateway-metadata': '{"region":"eu"}' };
    expect(await answeredBy(combined, { user: 'u1' }, eu)).toBe('eu');
    expect(await answeredBy(combined, {}, eu)).toBe('default');
    expect(await answeredBy(combined, {}, { 'x-gateway-metadata': '{"region":"eu","plan":"pro"}' })).toBe(
      'eu',
    );
  });

  it('the url is the request path, without its query string', async () => {
    const config = conditional([{ query: { url: '/v1/chat/completions' }, then: 'eu' }]);
    const response = await postWithConfig(gateway, '/chat/completions?tenant=x', config, chat);
    const answer = (await response.json()) as OpenAI.ChatCompletion;
    expect(answer.choices[0].message.content).toBe('[eu] hi');
  });

  it('the first matching condition wins', async () => {
    const config = conditional([
      { query: { 'metadata.plan': 'pro' }, then: 'pro' },
      { query: { 'metadata.plan': { $exists: true } }, then: 'free' },
    ]);
    expect(await answeredBy(config, {}, { 'x-gateway-metadata': '{"plan":"pro"}' })).toBe('pro');
    expect(await answeredBy(config, {}, { 'x-gateway-metadata': '{"plan":"team"}' })).toBe('free');
  });

  it('an unknown operator is refused with a 400 naming its place', async () => {
    const config = conditional([{ query: { 'metadata.plan': { $like: 'p%' } }, then: 'pro' }]);
    const error = await client(gateway, config)
      .chat.completions.create(chat)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.APIError>).param).toContain('conditions[0].query');
  });
});

describe('client disconnect', () => {
  let upstream: Server;
  let closedAt: number | undefined;
  let origin: string;

  beforeAll(async () => {
    // A slow streaming upstream that notes when the gateway hangs up on it.
    upstream = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let n = 0;
      const timer = setInterval(() => {
        n += 1;
        const chunk = {
          id: 'chatcmpl-slow',
          object: 'chat.completion.chunk',
          created: 1,
          model: 'slow',
          choices: [{ index: 0, delta: { content: `w${n} ` }, finish_reason: null }],
        };
        res.write(`data: ${JSON.stringify(chunk)}\n\n`);
        if (n >= 100) {
          clearInterval(timer);
          res.end('data: [DONE]\n\n');
        }
      }, 100);
      res.on('close', () => {
        clearInterval(timer);
        closedAt = Date.now();
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    upstream.closeAllConnections();
    await new Promise((resolve) => upstream.close(resolve));
  });

  it('aborts the upstream call at once when the client goes away mid-stream', async () => {
    const config = { provider: 'openai', api_key: 'sk', custom_host: `${origin}/v1` };
    const controller = new AbortController();
    const stream = await client(gateway, config).chat.completions.create(
      { ...chat, stream: true },
      { signal: controller.signal },
    );
    let abortedAt = 0;
    try {
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta?.content?.startsWith('w2')) {
          abortedAt = Date.now();
          controller.abort();
        }
      }
    } catch {
      // the SDK may end the iteration or throw an abort error; either is fine
    }
    expect(abortedAt).toBeGreaterThan(0);
    const deadline = Date.now() + 2000;
    while (closedAt === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(closedAt).toBeDefined();
    expect((closedAt as number) - abortedAt).toBeLessThan(500);
  });
});
