/**
 * The openai SDKs send `Content-Type: application/json` with no body on operations that take none
 * (cancelling a batch or a job, deleting a file): an empty body is no body.
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

it.each([
  ['POST', '/batches/batch_nope/cancel'],
  ['POST', '/fine_tuning/jobs/ftjob_nope/cancel'],
  ['POST', '/api-keys/key_nope/revoke'],
  ['DELETE', '/files/file_nope'],
  ['DELETE', '/responses/resp_nope'],
])('%s %s with Content-Type: application/json and no body reaches the route', async (method, path) => {
  const withoutType = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { 'x-gateway-api-key': gateway.adminKey },
  });
  const expected = withoutType.status;
  await withoutType.text();
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { 'x-gateway-api-key': gateway.adminKey, 'content-type': 'application/json' },
  });
  const body = (await response.json()) as { error?: { code: string } };
  expect(body.error?.code, JSON.stringify(body)).not.toBe('invalid_json');
  expect(response.status).toBe(expected);
});

it('a route that needs a body still refuses an empty one as a missing body', async () => {
  const response = await fetch(`${gateway.url}/chat/completions`, {
    method: 'POST',
    headers: { 'x-gateway-api-key': gateway.adminKey, 'content-type': 'application/json' },
  });
  const body = (await response.json()) as { error: { code: string; message: string } };
  expect(response.status, JSON.stringify(body)).toBe(400);
  expect(body.error.code).toBe('invalid_body');
  expect(body.error.message).toMatch(/body/);
});
