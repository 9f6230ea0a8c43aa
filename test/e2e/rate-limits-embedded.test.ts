/**
 * Rate-limit policies on one embedded gateway (SQLite, counters in process memory), through the `openai`
 * SDK: requests and tokens, settled from a JSON answer's usage, with time injected.
 */
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { target } from '../routing/support.js';
import { client } from '../management/http.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';

describe('rate-limit policies on one embedded node (memory counters)', () => {
  let now = Date.UTC(2030, 0, 1);
  let gateway: TestGateway;
  let fake: FakeUpstream;

  beforeAll(async () => {
    fake = await startFakeOpenAI({ name: 'limits-embedded' });
    gateway = await startGateway({ rateLimitClock: () => now });
  });
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  const sdk = (metadata: Record<string, string>) =>
    new OpenAI({
      baseURL: gateway.url,
      apiKey: 'sk-client',
      maxRetries: 0,
      defaultHeaders: {
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-config': JSON.stringify(target(fake)),
        'x-gateway-metadata': JSON.stringify(metadata),
      },
    });
  const policy = async (body: Record<string, unknown>) => {
    const created = await client(gateway.url, gateway.adminKey).post('/policies/rate-limits', body);
    expect(created.status, created.text).toBe(200);
    return created.body.id as string;
  };

  it('limits requests per key, and room comes back with time', async () => {
    const id = await policy({
      conditions: [{ key: 'metadata.case', value: 'requests' }],
      group_by: [{ key: 'api_key' }],
      type: 'requests',
      unit: 'rpm',
      value: 2,
    });
    const ask = () =>
      sdk({ case: 'requests' })
        .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
        .withResponse();
    expect((await ask()).response.headers.get('x-ratelimit-remaining-requests')).toBe('1');
    expect((await ask()).response.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    const refused = await ask().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(APIError);
    expect((refused as APIError).status).toBe(429);
    // OpenAI's 429: the unit in type, rate_limit_exceeded in code; the policy in the message and a header.
    expect((refused as APIError).code).toBe('rate_limit_exceeded');
    expect((refused as APIError).type).toBe('requests');
    expect((refused as APIError).message).toContain(id);
    expect((refused as APIError).headers?.get('x-gateway-rate-limit-policy')).toBe(id);
    expect((refused as APIError).headers?.get('retry-after')).toBe('30');
    now += 30_000;
    expect((await ask()).response.status).toBe(200);
  });

  it('settles a token reservation to the usage of a JSON answer', async () => {
    await policy({
      conditions: [{ key: 'metadata.case', value: 'tokens' }],
      group_by: [{ key: 'metadata.user' }],
      type: 'tokens',
      unit: 'rpd',
      value: 10_000,
    });
    const messages = [{ role: 'user' as const, content: 'a question of some length' }];
    const reservation = Math.ceil(JSON.stringify(messages).length / 4) + 50;
    const ask = () =>
      sdk({ case: 'tokens', user: 'u1' })
        .chat.completions.create({ model: 'gpt-4o-mini', messages, max_completion_tokens: 50 })
        .withResponse();
    const first = await ask();
    expect(first.response.headers.get('x-ratelimit-remaining-tokens')).toBe(String(10_000 - reservation));
    const used = first.data.usage?.total_tokens as number;
    const second = await ask();
    expect(second.response.headers.get('x-ratelimit-remaining-tokens')).toBe(
      String(10_000 - used - reservation),
    );

    // Each of n choices may produce max_completion_tokens.
    const several = await sdk({ case: 'tokens', user: 'u2' })
      .chat.completions.create({ model: 'gpt-4o-mini', messages, max_completion_tokens: 50, n: 3 })
      .withResponse();
    expect(several.response.headers.get('x-ratelimit-remaining-tokens')).toBe(
      String(10_000 - (reservation - 50 + 3 * 50)),
    );
  });

  it('a call asking for more tokens than a number holds reserves a bounded number, and the limit still counts', async () => {
    await policy({
      conditions: [{ key: 'metadata.case', value: 'huge-max-tokens' }],
      group_by: [{ key: 'api_key' }],
      type: 'tokens',
      unit: 'rpd',
      value: 10_000,
    });
    const messages = [{ role: 'user' as const, content: 'hi' }];
    const ask = (extra: Record<string, number> = {}) =>
      sdk({ case: 'huge-max-tokens' })
        .chat.completions.create({ model: 'gpt-4o-mini', messages, ...extra })
        .withResponse();
    // 1e308 tokens for each of two choices: more than a number holds.
    const huge = await ask({ max_tokens: 1e308, n: 2 });
    expect(huge.response.headers.get('x-ratelimit-remaining-tokens')).toBe('0');
    const used = huge.data.usage?.total_tokens as number;
    const reservation = Math.ceil(JSON.stringify(messages).length / 4);
    const next = await ask();
    expect(next.response.headers.get('x-ratelimit-remaining-tokens')).toBe(
      String(10_000 - used - reservation),
    );
    const last = await ask();
    expect(last.response.headers.get('x-ratelimit-remaining-tokens')).toBe(
      String(10_000 - used - (next.data.usage?.total_tokens as number) - reservation),
    );
  });

  it("a 429 of one policy reads the others' counters as they stand, charged nothing", async () => {
    await policy({
      conditions: [{ key: 'metadata.case', value: 'two-types' }],
      group_by: [{ key: 'api_key' }],
      type: 'requests',
      unit: 'rpd',
      value: 100,
    });
    const tokensPolicy = await policy({
      conditions: [{ key: 'metadata.case', value: 'two-types' }],
      group_by: [{ key: 'api_key' }],
      type: 'tokens',
      unit: 'rpd',
      value: 2,
    });
    const ask = () =>
      sdk({ case: 'two-types' })
        .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
        .withResponse();
    // The first call uses the tokens policy's room up (its usage is more than 2 tokens).
    const first = await ask();
    expect(first.data.usage?.total_tokens).toBeGreaterThanOrEqual(2);
    expect(first.response.headers.get('x-ratelimit-remaining-requests')).toBe('99');
    const refused = (await ask().catch((error: unknown) => error)) as APIError;
    expect(refused.status).toBe(429);
    expect([refused.type, refused.code]).toEqual(['tokens', 'rate_limit_exceeded']);
    expect(refused.headers?.get('x-gateway-rate-limit-policy')).toBe(tokensPolicy);
    expect(refused.headers?.get('x-ratelimit-remaining-tokens')).toBe('0');
    // Refused, the call took no request: 99 are left, as before it.
    expect(refused.headers?.get('x-ratelimit-remaining-requests')).toBe('99');
  });

  it('counts the tokens of every answer a retried target was billed for, not only the last', async () => {
    await policy({
      conditions: [{ key: 'metadata.case', value: 'retried-tokens' }],
      group_by: [{ key: 'api_key' }],
      type: 'tokens',
      unit: 'rpd',
      value: 10_000,
    });
    const messages = [{ role: 'user' as const, content: 'dessert?' }];
    const reservation = Math.ceil(JSON.stringify(messages).length / 4);
    // What the provider bills for each of the two answers, asked of it directly.
    const direct = new OpenAI({ baseURL: fake.url, apiKey: 'sk-test', maxRetries: 0 });
    fake.enqueue({ text: 'a banana split' });
    const denied = await direct.chat.completions.create({ model: 'gpt-4o-mini', messages });
    const passed = await direct.chat.completions.create({ model: 'gpt-4o-mini', messages });
    const billed = (denied.usage?.total_tokens as number) + (passed.usage?.total_tokens as number);

    const config = {
      ...target(fake),
      output_guardrails: [
        { id: 'no-banana', deny: true, 'default.contains': { words: ['banana'], operator: 'none' } },
      ],
      retry: { attempts: 1, on_status_codes: [446] },
    };
    const openai = new OpenAI({
      baseURL: gateway.url,
      apiKey: 'sk-client',
      maxRetries: 0,
      defaultHeaders: {
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-config': JSON.stringify(config),
        'x-gateway-metadata': JSON.stringify({ case: 'retried-tokens' }),
      },
    });
    const ask = () => openai.chat.completions.create({ model: 'gpt-4o-mini', messages }).withResponse();
    fake.enqueue({ text: 'a banana split' });
    const first = await ask();
    expect(first.response.headers.get('x-gateway-retry-attempt-count')).toBe('1');
    const second = await ask();
    expect(second.response.headers.get('x-ratelimit-remaining-tokens')).toBe(
      String(10_000 - billed - reservation),
    );
  });

  it('reserves an inline image as media, not as the characters of its base64', async () => {
    await policy({
      conditions: [{ key: 'metadata.case', value: 'image-tokens' }],
      group_by: [{ key: 'api_key' }],
      type: 'tokens',
      unit: 'rpm',
      value: 100_000,
    });
    const openai = sdk({ case: 'image-tokens' });
    // A 300 kB picture inline, as a data URL: 400,000 characters of base64.
    const picture = `data:image/png;base64,${Buffer.alloc(300_000, 7).toString('base64')}`;
    const looking = openai.chat.completions
      .create({
        model: 'gpt-4o-mini',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is in this picture?' },
              { type: 'image_url', image_url: { url: picture } },
            ],
          },
        ],
      })
      .withResponse();
    const { response } = await looking;
    expect(Number(response.headers.get('x-ratelimit-remaining-tokens'))).toBeGreaterThan(95_000);
  });

  it('governs prompt completions, matched by the prompt, with the headers in the envelope too', async () => {
    const api = client(gateway.url, gateway.adminKey);
    const prompt = await api.post('/prompts', {
      slug: 'limited-prompt',
      string: JSON.stringify([{ role: 'user', content: 'Say {{word}}' }]),
      parameters: { model: 'gpt-4o-mini' },
      config: target(fake),
    });
    expect(prompt.status, prompt.text).toBe(200);
    const id = await policy({
      conditions: [{ key: 'prompt', value: 'limited-prompt' }],
      group_by: [{ key: 'prompt' }],
      type: 'requests',
      unit: 'rpm',
      value: 1,
    });
    const run = () =>
      fetch(`${gateway.url}/prompts/limited-prompt/completions`, {
        method: 'POST',
        headers: { 'x-gateway-api-key': gateway.adminKey, 'content-type': 'application/json' },
        body: JSON.stringify({ variables: { word: 'hello' } }),
      });
    const first = await run();
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    const envelope = (await first.json()) as { headers: Record<string, string> };
    expect(envelope.headers['x-ratelimit-limit-requests']).toBe('1');
    expect(envelope.headers['x-ratelimit-remaining-requests']).toBe('0');
    const refused = await run();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-gateway-rate-limit-policy')).toBe(id);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('rate_limit_exceeded');
  });
  it('counts a virtual key and a catalog provider by what they are, named by slug or by id', async () => {
    const api = client(gateway.url, gateway.adminKey);
    const stored: Record<string, string> = {};
    for (const [route, slug] of [
      ['/virtual-keys', 'limited-vk'],
      ['/providers', 'limited-catalog'],
    ] as const) {
      const created = await api.post(route, {
        slug,
        provider: 'openai',
        api_key: 'sk-stored',
        custom_host: fake.url,
      });
      expect(created.status, created.text).toBe(200);
      stored[slug] = created.body.id as string;
    }
    const byVirtualKey = await policy({
      conditions: [{ key: 'virtual_key', value: 'limited-vk' }],
      group_by: [{ key: 'virtual_key' }],
      type: 'requests',
      unit: 'rpm',
      value: 1,
    });
    const byCatalog = await policy({
      conditions: [{ key: 'provider', value: '@limited-catalog' }],
      group_by: [{ key: 'provider' }],
      type: 'requests',
      unit: 'rpm',
      value: 1,
    });
    const ask = (config: Record<string, unknown>) =>
      gatewayOpenAI(gateway, config)
        .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
        .then(
          () => 200,
          (error: unknown) => [
            (error as APIError).status,
            (error as APIError).headers?.get('x-gateway-rate-limit-policy'),
          ],
        );
    expect(await ask({ virtual_key: 'limited-vk' })).toBe(200);
    expect(await ask({ virtual_key: stored['limited-vk'] })).toEqual([429, byVirtualKey]);
    expect(await ask({ provider: `@${stored['limited-catalog']}` })).toBe(200);
    expect(await ask({ provider: '@limited-catalog' })).toEqual([429, byCatalog]);
  });
  it('counts the tokens of the fallback that answered when the first target failed', async () => {
    await policy({
      conditions: [{ key: 'metadata.case', value: 'fallback-tokens' }],
      group_by: [{ key: 'api_key' }],
      type: 'tokens',
      unit: 'rpd',
      value: 10_000,
    });
    const config = {
      strategy: { mode: 'fallback' },
      targets: [target(fake, { override_params: { model: 'fake-status-503' } }), target(fake)],
    };
    const ask = () =>
      gatewayOpenAI(gateway, config, { 'x-gateway-metadata': JSON.stringify({ case: 'fallback-tokens' }) })
        .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
        .withResponse();
    const first = await ask();
    const used = first.data.usage?.total_tokens as number;
    expect(used).toBeGreaterThan(0);
    const second = await ask();
    const reservation = Math.ceil(JSON.stringify([{ role: 'user', content: 'hi' }]).length / 4);
    // The first call's answer came from the fallback: its tokens are counted, not lost with the failure.
    expect(second.response.headers.get('x-ratelimit-remaining-tokens')).toBe(
      String(10_000 - used - reservation),
    );
  });
  it('matches an organisation_id condition written in capitals, the same UUID as the API takes it', async () => {
    const organisationId = (await client(gateway.url, gateway.adminKey).get('/api-keys')).body.data[0]
      .organisation_id as string;
    expect(organisationId).toBe(organisationId.toLowerCase());
    const id = await policy({
      conditions: [
        { key: 'metadata.case', value: 'organisation-capitals' },
        { key: 'organisation_id', value: organisationId.toUpperCase() },
      ],
      group_by: [{ key: 'organisation_id' }],
      type: 'requests',
      unit: 'rpd',
      value: 1,
    });
    const ask = () =>
      sdk({ case: 'organisation-capitals' })
        .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
        .withResponse()
        .then(
          (answer) => [answer.response.status, answer.response.headers.get('x-ratelimit-limit-requests')],
          (error: unknown) => [
            (error as APIError).status,
            (error as APIError).headers?.get('x-gateway-rate-limit-policy'),
          ],
        );
    expect(await ask()).toEqual([200, '1']);
    expect(await ask()).toEqual([429, id]);
  });
  it('a metadata key named like a built-in of objects is a value only when the call sends it', async () => {
    for (const name of ['constructor', 'toString', '__proto__']) {
      await policy({
        conditions: [{ key: `metadata.${name}`, value: '*' }],
        group_by: [{ key: `metadata.${name}` }],
        type: 'requests',
        unit: 'rpm',
        value: 1,
      });
    }
    for (let i = 0; i < 3; i++) {
      const answer = await sdk({ case: 'built-in-names' })
        .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
        .withResponse();
      // No policy governs a call without those metadata keys: no 429, and the provider's own headers.
      expect(answer.response.headers.get('x-ratelimit-limit-requests')).not.toBe('1');
    }
    const sent = () =>
      sdk({ constructor: 'alice' })
        .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
        .withResponse()
        .then(
          (answer) => answer.response.status,
          (error: unknown) => (error as APIError).status,
        );
    expect(await sent()).toBe(200);
    expect(await sent()).toBe(429);
  });
});
