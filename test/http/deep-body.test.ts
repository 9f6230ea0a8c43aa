/**
 * Every JSON body under /v1 nested deeper than 128 levels is a 400 naming its top-level field, before any
 * route walks it: model calls and management alike.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startGateway();
});
afterAll(async () => {
  await gateway?.close();
});

const deep = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
const deepTargets = (n: number) =>
  '{"strategy":{"mode":"fallback"},"targets":['.repeat(n) +
  '{"provider":"openai","api_key":"x"}' +
  ']}'.repeat(n);

async function post(path: string, body: string) {
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': gateway.adminKey },
    body,
  });
  return {
    status: response.status,
    body: (await response.json()) as {
      type?: string;
      error: { type: string; code?: string; param?: string | null };
    },
  };
}

it.each([
  [
    '/configs',
    `{"slug":"deep","config":{"provider":"openai","api_key":"x","override_params":${deep(5000)}}}`,
    'config',
  ],
  ['/configs', `{"slug":"tdeep","config":${deepTargets(3000)}}`, 'config'],
  [
    '/prompts',
    `{"slug":"p-deep","string":"[]","provider":"openai","parameters":{"model":"m","x":${deep(5000)}}}`,
    'parameters',
  ],
  ['/guardrails', `{"slug":"g-deep","checks":${deep(5000)}}`, 'checks'],
  ['/chat/completions', `{"model":"m","messages":[],"tools":${deep(5000)}}`, 'tools'],
])('POST %s with a body nested thousands deep → 400 naming %s', async (path, body, param) => {
  const response = await post(path, body);
  expect(response.status, JSON.stringify(response.body)).toBe(400);
  expect(response.body.error.code).toBe('invalid_body');
  expect(response.body.error.param).toBe(param);
});

it('POST /messages answers the refusal in Anthropic’s shape', async () => {
  const response = await post('/messages', `{"model":"m","max_tokens":1,"messages":${deep(5000)}}`);
  expect(response.status).toBe(400);
  expect(response.body.type).toBe('error');
  expect(response.body.error.type).toBe('invalid_request_error');
});
