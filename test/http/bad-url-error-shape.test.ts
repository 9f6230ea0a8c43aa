/** A path that is not percent-encoded UTF-8 is refused by the router: still in the OpenAI error shape. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';

let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startGateway();
});
afterAll(async () => {
  await gateway?.close();
});

it.each(['/v1/configs/%C3%28', '/v1/logs/%ED%A0%80', '/v1/files/%FF', '/v1/batches/%E0%A4'])(
  'GET %s → 400 in the OpenAI error shape',
  async (path) => {
    const response = await fetch(`${gateway.origin}${path}`, {
      headers: { 'x-gateway-api-key': gateway.adminKey },
    });
    const body = (await response.json()) as Record<string, unknown>;
    expect(response.status).toBe(400);
    expect(typeof body.error, JSON.stringify(body)).toBe('object');
    expectOpenAPIValid('ErrorResponse', body);
    expect(response.headers.get('x-gateway-error-source')).toBe('gateway');
    expect(response.headers.get('x-gateway-trace-id')).toBeTruthy();
  },
);
