/**
 * The gateway's own paths (management, logs) are never passed through, whatever the method, the shape
 * or the length of the id.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

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

it.each([
  ['POST', '/v1/logs'],
  ['GET', `/v1/logs/${'a'.repeat(101)}`],
  ['GET', `/v1/configs/${'b'.repeat(101)}`],
  ['PUT', '/v1/configs/abc'],
  ['GET', '/v1/api-keys/x/extra'],
  ['DELETE', '/v1/workspaces/abc'],
  ['PATCH', '/v1/logs/abc'],
  ['PATCH', '/v1/configs/abc/extra'],
  ['POST', '/v1/openapi.json'],
])('%s %s is answered by the gateway, never sent to the provider', async (method, path) => {
  const before = fake.requests.length;
  const response = await fetch(`${gateway.origin}${path}`, {
    method,
    headers: {
      'content-type': 'application/json',
      'x-gateway-api-key': gateway.adminKey,
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': fake.url,
      authorization: 'Bearer sk-provider-key',
    },
    ...(method === 'GET' || method === 'DELETE' ? {} : { body: '{}' }),
  });
  const body = (await response.json()) as { error: { code: string } };
  expect(fake.requests.length - before, `${method} ${path} reached the provider`).toBe(0);
  expect(response.status).toBe(404);
  expect(body.error.code).toBe('not_found');
  expect(response.headers.get('x-gateway-error-source')).toBe('gateway');
});

it('an id longer than 100 characters reaches its route', async () => {
  const response = await fetch(`${gateway.url}/configs/${'b'.repeat(500)}`, {
    headers: { 'x-gateway-api-key': gateway.adminKey },
  });
  const body = (await response.json()) as { error: { message: string } };
  expect(response.status).toBe(404);
  expect(body.error.message).not.toMatch(/^No route/);
});
