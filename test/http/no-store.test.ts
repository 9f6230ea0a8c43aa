/**
 * Answers under /v1 carry log bodies, prompts and a new key's secret: each goes out with
 * `cache-control: no-store` (JSON, streams, errors, pass-through), so no cache on the way keeps them; the
 * public OpenAPI document stays cacheable.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { target } from '../routing/support.js';

let gateway: TestGateway;
let fake: FakeUpstream;
/** A provider that asks for its answers to be cached. */
let cacheable: Server;
let cacheableUrl: string;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'no-store' });
  cacheable = createServer((_request, res) => {
    res.writeHead(200, {
      'content-type': 'application/json',
      'cache-control': 'public, max-age=600',
      // The fields a CDN in front reads before Cache-Control (RFC 9213, and Surrogate-Control).
      'cdn-cache-control': 'max-age=600',
      'cloudflare-cdn-cache-control': 'max-age=600',
      'surrogate-control': 'max-age=600',
    });
    res.end('{"object":"list","data":[]}');
  });
  await new Promise<void>((resolve) => cacheable.listen(0, '127.0.0.1', resolve));
  cacheableUrl = `http://127.0.0.1:${(cacheable.address() as AddressInfo).port}`;
  gateway = await startGateway();
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
  await new Promise((resolve) => cacheable?.close(resolve));
});

function call(path: string, init: RequestInit & { config?: object } = {}): Promise<Response> {
  const { config, ...rest } = init;
  return fetch(`${gateway.url}${path}`, {
    ...rest,
    headers: {
      'x-gateway-api-key': gateway.adminKey,
      'content-type': 'application/json',
      ...(config ? { 'x-gateway-config': JSON.stringify(config) } : {}),
      ...(rest.headers as Record<string, string> | undefined),
    },
  });
}

const chat = (stream: boolean) =>
  JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream });

it('sends no-store on model answers, streamed or not, and on their errors', async () => {
  const whole = await call('/chat/completions', { method: 'POST', body: chat(false), config: target(fake) });
  expect(whole.status).toBe(200);
  expect(whole.headers.get('cache-control')).toBe('no-store');
  const streamed = await call('/chat/completions', {
    method: 'POST',
    body: chat(true),
    config: target(fake),
  });
  expect(streamed.status).toBe(200);
  await streamed.text();
  expect(streamed.headers.get('cache-control')).toBe('no-store');
  const refused = await call('/chat/completions', { method: 'POST', body: '{}', config: target(fake) });
  expect(refused.status).toBe(400);
  expect(refused.headers.get('cache-control')).toBe('no-store');
});

it('sends no-store on management, logs and analytics answers, a new key with its secret among them', async () => {
  const created = await call('/api-keys', {
    method: 'POST',
    body: JSON.stringify({ name: 'cached?', role: 'member' }),
  });
  expect(created.status).toBe(200);
  expect(((await created.json()) as { key?: string }).key).toBeTruthy();
  expect(created.headers.get('cache-control')).toBe('no-store');
  for (const path of ['/logs', '/analytics/summary', '/api-keys']) {
    const answer = await call(path);
    expect(answer.status, path).toBe(200);
    expect(answer.headers.get('cache-control'), path).toBe('no-store');
  }
  const unauthenticated = await fetch(`${gateway.url}/logs`);
  expect(unauthenticated.status).toBe(401);
  expect(unauthenticated.headers.get('cache-control')).toBe('no-store');
});

it("keeps no-store on a pass-through whatever the provider's cache-control says", async () => {
  const relayed = await call('/vector_stores', {
    config: { provider: 'openai', api_key: 'sk-test', custom_host: cacheableUrl },
  });
  expect(relayed.status).toBe(200);
  expect(relayed.headers.get('cache-control')).toBe('no-store');
  for (const name of ['cdn-cache-control', 'cloudflare-cdn-cache-control', 'surrogate-control']) {
    expect(relayed.headers.get(name), name).toBeNull();
  }
});

it.each([
  ['a malformed trace id', { 'x-gateway-trace-id': 'not an id' }],
  ['a span name over 256 characters', { 'x-gateway-span-name': 'x'.repeat(257) }],
])('sends no-store on the refusal of %s', async (_name, headers) => {
  const refused = await call('/logs', { headers });
  expect(refused.status).toBe(400);
  expect(refused.headers.get('cache-control')).toBe('no-store');
});

it('sends no-store on the refusal of a path that is not percent-encoded UTF-8', async () => {
  const refused = await call('/logs/%ED%A0%80');
  expect(refused.status).toBe(400);
  expect(refused.headers.get('cache-control')).toBe('no-store');
});

it('leaves the public OpenAPI document cacheable', async () => {
  const document = await fetch(`${gateway.url}/openapi.json`);
  expect(document.status).toBe(200);
  expect(document.headers.get('cache-control')).not.toBe('no-store');
});
