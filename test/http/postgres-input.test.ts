/**
 * Client input that PostgreSQL cannot hold as given (U+0000 in text, integers past a column's range) is a
 * 4xx on PostgreSQL as it is on SQLite, never a 500.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';

describeWithPostgres('client input on PostgreSQL', () => {
  let gateway: TestGateway;
  let fake: FakeUpstream;
  const schema = freshSchemaName('postgres_input');

  beforeAll(async () => {
    fake = await startFakeOpenAI();
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
    await fake?.close();
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
    ['/configs/%00', 404, 'id'],
    ['/virtual-keys/%00', 404, 'slug'],
    ['/api-keys/%00', 404, 'id'],
    ['/prompts/%00/versions/1', 404, 'id'],
    ['/files/%00', 404, 'fileId'],
    ['/batches/%00', 404, 'batchId'],
    ['/fine_tuning/jobs/%00', 404, 'jobId'],
    ['/responses/%00', 404, 'response_id'],
    ['/logs/%00', 404, 'id'],
    ['/logs?trace_id=%00', 400, 'trace_id'],
    ['/logs?search=a%00', 400, 'search'],
    ['/batches?after=%00', 400, 'after'],
    ['/analytics/summary?model=%00', 400, 'model'],
  ] as const)('GET %s (U+0000) → %i naming %s', async (path, status, param) => {
    const response = await send('GET', path);
    expect(response.status, JSON.stringify(response.body)).toBe(status);
    expect(response.body.error?.param).toBe(param);
  });

  it.each([
    ['/configs', { slug: 'nul', name: 'a\u0000b', config: { provider: 'openai', api_key: 'x' } }],
    ['/api-keys', { name: 'a\u0000b', role: 'member' }],
    ['/virtual-keys', { slug: 'nul', name: 'a\u0000b', provider: 'openai', api_key: 'sk-x' }],
  ])('POST %s with a string holding U+0000 → 400', async (path, body) => {
    const response = await send('POST', path, body);
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error?.code).toBe('invalid_body');
  });

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

  it('a call whose model holds U+0000 is recorded, and so is every call after it', async () => {
    const call = (traceId: string, model: string) =>
      fetch(`${gateway.url}/chat/completions`, {
        method: 'POST',
        headers: {
          'x-gateway-api-key': gateway.adminKey,
          'content-type': 'application/json',
          'x-gateway-provider': 'openai',
          'x-gateway-custom-host': fake.url,
          'x-gateway-trace-id': traceId,
          authorization: 'Bearer sk-test',
        },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
      });
    expect((await call('nul-first', 'gpt\u0000x')).status).toBe(200);
    expect((await call('plain-second', 'gpt-4o-mini')).status).toBe(200);
    const logged = async (traceId: string) => {
      for (let i = 0; i < 50; i++) {
        const page = await send('GET', `/logs?trace_id=${traceId}`);
        const data = (page.body as unknown as { data: Array<{ model: string }> }).data;
        if (data.length > 0) return data;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return [];
    };
    expect((await logged('plain-second')).length).toBe(1);
    expect((await logged('nul-first'))[0]?.model).toBe('gpt\uFFFDx');
  });
});
