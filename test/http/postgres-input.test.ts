/**
 * Client input that PostgreSQL cannot hold as given (U+0000 in text, integers past a column's range) is a
 * 4xx on PostgreSQL as it is on SQLite, never a 500.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';

describeWithPostgres('client input on PostgreSQL', () => {
  let gateway: TestGateway;
  const schema = freshSchemaName('postgres_input');

  beforeAll(async () => {
    gateway = await startGateway({ postgres: { url: postgresUrl(), schema } });
    const created = await send('POST', '/prompts', {
      slug: 'p',
      string: '[{"role":"user","content":"hi"}]',
      provider: 'openai',
      parameters: { model: 'm' },
    });
    expect(created.status).toBe(200);
  });
  afterAll(async () => {
    await gateway?.close();
    await dropSchema(schema);
  });

  async function send(method: string, path: string, body?: unknown) {
    const response = await fetch(`${gateway.url}${path}`, {
      method,
      headers: {
        'x-gateway-api-key': gateway.adminKey,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return {
      status: response.status,
      body: JSON.parse(text) as { error?: { code: string; param: string | null } },
    };
  }

  it.each([
    ['PUT', '/prompts/p/publish', 400, 'version', { version: 2147483648 }],
    ['GET', '/prompts/p/versions/2147483648', 404, 'version', undefined],
    ['POST', '/api-keys', 400, 'expires_at', { name: 'x', role: 'member', expires_at: 1e20 }],
    ['PATCH', '/api-keys/key_nope', 400, 'expires_at', { expires_at: 2 ** 63 }],
  ] as const)(
    '%s %s with an integer past its column → %i naming %s',
    async (method, path, status, param, body) => {
      const response = await send(method, path, body);
      expect(response.status, JSON.stringify(response.body)).toBe(status);
      expect(response.body.error?.param).toBe(param);
    },
  );
});
