/**
 * Every body rule and config rule, sent through the real server: each bad value gets a 400 in the
 * OpenAI error shape naming the field, marked as the gateway's own error, and never reaches the provider.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
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
    const response = await fetch(`${gateway.url}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-config': JSON.stringify(body),
      },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
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
