/**
 * Every body rule and config rule, sent through the real server: each bad value gets a 400 in the
 * OpenAI error shape naming the field, marked as the gateway's own error, and never reaches the provider.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { postWithConfig, startGateway, type TestGateway } from '../helpers/gateway.js';
import { chatBodyCases, completionBodyCases, configCases, embeddingBodyCases } from '../schemas/cases.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';

let gateway: TestGateway;
let fake: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  gateway = await startGateway();
});
afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

function providerHeaders(): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-gateway-api-key': gateway.adminKey,
    'x-gateway-provider': 'openai',
    'x-gateway-custom-host': fake.url,
    authorization: 'Bearer sk-test',
  };
}

async function expect400(response: Response, param: string | null): Promise<void> {
  const body = (await response.json()) as { error: { param: string | null; message: string } };
  expect(response.status, JSON.stringify(body)).toBe(400);
  expect(body.error.param).toBe(param);
  expect(body.error.message.length).toBeGreaterThan(0);
  expect(response.headers.get('x-gateway-error-source')).toBe('gateway');
  expectOpenAPIValid('ErrorResponse', body);
}

const bodyTables = [
  { path: '/chat/completions', cases: chatBodyCases },
  { path: '/completions', cases: completionBodyCases },
  { path: '/embeddings', cases: embeddingBodyCases },
];

describe.each(bodyTables)('POST $path rejects each bad body', ({ path, cases }) => {
  it.each(cases)('$name → 400 naming $param', async ({ body, param }) => {
    const before = fake.requests.length;
    const response = await fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: providerHeaders(),
      body: JSON.stringify(body),
    });
    await expect400(response, param);
    expect(fake.requests.length).toBe(before);
  });
});

describe('x-gateway-config rejects each bad config', () => {
  it.each(configCases)('$name → 400 naming $param', async ({ body, param }) => {
    const before = fake.requests.length;
    const response = await postWithConfig(gateway, '/chat/completions', body, {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
    });
    // An array is not read as inline JSON: the header itself is what is wrong.
    await expect400(response, Array.isArray(body) ? 'x-gateway-config' : param);
    expect(fake.requests.length).toBe(before);
  });
});

describe('request headers', () => {
  it.each([
    ['x-gateway-metadata', 'not json', 'x-gateway-metadata'],
    ['x-gateway-metadata', '[1,2]', 'x-gateway-metadata'],
    ['x-gateway-metadata', '{"k":{"nested":true}}', 'x-gateway-metadata.k'],
    ['x-gateway-trace-id', 'has spaces in it', 'x-gateway-trace-id'],
    ['x-gateway-span-id', 'x'.repeat(200), 'x-gateway-span-id'],
    ['x-gateway-cache-force-refresh', 'maybe', 'x-gateway-cache-force-refresh'],
    ['x-gateway-strict-compat-compliance', 'False', 'x-gateway-strict-compat-compliance'],
    ['x-gateway-strict-compat-compliance', '0', 'x-gateway-strict-compat-compliance'],
    ['x-gateway-custom-host', 'http://169.254.169.254/latest', 'x-gateway-custom-host'],
    ['x-gateway-custom-host', 'ftp://example.com', 'x-gateway-custom-host'],
  ])('%s: %s → 400 naming %s', async (name, value, param) => {
    const response = await fetch(`${gateway.url}/chat/completions`, {
      method: 'POST',
      headers: { ...providerHeaders(), [name]: value },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await expect400(response, param);
  });

  describe('x-gateway-metadata limits: 64 pairs, keys of 128 characters, values of 512, counted as OpenAI counts characters', () => {
    // An emoji outside the Basic Multilingual Plane: one character (code point), two UTF-16 code units.
    const EMOJI = '\u{1F600}';
    /** JSON text in ASCII, as a header carries it: every other character as its \u escape. */
    const header = (metadata: Record<string, string>) =>
      JSON.stringify(metadata).replace(
        /[^\x20-\x7e]/g,
        (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`,
      );
    const send = (metadata: Record<string, string>) =>
      fetch(`${gateway.url}/chat/completions`, {
        method: 'POST',
        headers: { ...providerHeaders(), 'x-gateway-metadata': header(metadata) },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
      });
    const pairs = (count: number) =>
      Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, 'v']));

    it.each([
      ['64 pairs', pairs(64)],
      ['a key of 128 emoji and a value of 512', { [EMOJI.repeat(128)]: EMOJI.repeat(512) }],
      ['a key of 128 letters', { ['k'.repeat(128)]: 'v' }],
    ])('%s: taken', async (_name, metadata) => {
      const response = await send(metadata);
      expect(response.status, await response.clone().text()).toBe(200);
      await response.arrayBuffer();
    });

    it.each([
      ['65 pairs', pairs(65), 'x-gateway-metadata'],
      ['a key of 129 emoji', { [EMOJI.repeat(129)]: 'v' }, `x-gateway-metadata.${EMOJI.repeat(129)}`],
      ['a key of 129 letters', { ['k'.repeat(129)]: 'v' }, `x-gateway-metadata.${'k'.repeat(129)}`],
      ['a value of 513 emoji', { k: EMOJI.repeat(513) }, 'x-gateway-metadata.k'],
    ])('%s: 400 naming it', async (_name, metadata, param) => {
      const before = fake.requests.length;
      await expect400(await send(metadata), param);
      expect(fake.requests.length).toBe(before);
    });
  });

  it.each(['Provider', 'gateway'])('x-gateway-files: %s → 400 naming it', async (value) => {
    const before = fake.requests.length;
    const response = await fetch(`${gateway.url}/files`, {
      headers: { ...providerHeaders(), 'x-gateway-files': value },
    });
    await expect400(response, 'x-gateway-files');
    expect(fake.requests.length).toBe(before);
  });

  it('no provider selected → 400 naming x-gateway-provider', async () => {
    const response = await fetch(`${gateway.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': gateway.adminKey },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await expect400(response, 'x-gateway-provider');
  });

  it('unknown provider → 400 naming provider', async () => {
    const response = await fetch(`${gateway.url}/chat/completions`, {
      method: 'POST',
      headers: { ...providerHeaders(), 'x-gateway-provider': 'no-such-provider' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await expect400(response, 'x-gateway-provider');
  });

  it('thinking without strict_compat_compliance false → 400 naming thinking', async () => {
    const response = await fetch(`${gateway.url}/chat/completions`, {
      method: 'POST',
      headers: providerHeaders(),
      body: JSON.stringify({
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }],
        thinking: { type: 'enabled', budget_tokens: 2048 },
      }),
    });
    await expect400(response, 'thinking');
  });
});
