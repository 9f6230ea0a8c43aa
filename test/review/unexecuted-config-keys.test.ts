/**
 * `prompt_id` is not executed by the gateway yet. A config naming it must be refused wherever a config
 * enters — the request header, the management API, a config stored before the refusal existed — and never
 * routed as if it were not there. (Hooks and guardrails run: test/e2e/hooks.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import { client, expectError, type Client } from '../management/http.js';

let gateway: TestGateway;
let fake: FakeUpstream;
let admin: Client;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'unexecuted' });
  gateway = await startGateway();
  admin = client(gateway.url, gateway.adminKey);
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
const target = () => ({ provider: 'openai', api_key: 'sk-test', custom_host: fake.url });

async function chatWith(config: string): Promise<Response> {
  return fetch(`${gateway.url}/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-gateway-api-key': gateway.adminKey,
      'x-gateway-config': config,
    },
    body: JSON.stringify(chat),
  });
}

async function expectRefusal(response: Response, param: string): Promise<void> {
  const body = (await response.json()) as { error: Record<string, unknown> };
  expect(response.status, JSON.stringify(body)).toBe(400);
  expect(body.error).toEqual({
    message: `${param} is not yet executed by this gateway; remove it (a config naming it is refused rather than routed without it)`,
    type: 'invalid_request_error',
    param,
    code: 'unsupported_parameter',
  });
  expect(response.headers.get('x-gateway-error-source')).toBe('gateway');
  expectOpenAPIValid('ErrorResponse', body);
}

describe('x-gateway-config naming prompt_id', () => {
  it('refuses it beside a complete provider, and calls nobody', async () => {
    const before = fake.requests.length;
    await expectRefusal(
      await chatWith(JSON.stringify({ ...target(), prompt_id: 'pp-1' })),
      'config.prompt_id',
    );
    expect(fake.requests.length).toBe(before);
  });

  it('names the path of a nested target', async () => {
    const config = {
      strategy: { mode: 'fallback' },
      targets: [target(), { ...target(), prompt_id: 'pp-1' }],
    };
    const before = fake.requests.length;
    await expectRefusal(await chatWith(JSON.stringify(config)), 'config.targets[1].prompt_id');
    expect(fake.requests.length).toBe(before);
  });
});

describe('stored configs naming prompt_id', () => {
  it('POST /v1/configs refuses it at the root and in targets, and stores nothing', async () => {
    expectError(
      await admin.post('/configs', { slug: 'prompted', config: { ...target(), prompt_id: 'pp-1' } }),
      400,
      'unsupported_parameter',
      'config.prompt_id',
    );
    const nested = {
      strategy: { mode: 'loadbalance' },
      targets: [target(), { ...target(), prompt_id: 'pp-1' }],
    };
    expectError(
      await admin.post('/configs', { slug: 'prompted', config: nested }),
      400,
      'unsupported_parameter',
      'config.targets[1].prompt_id',
    );
    expectError(await admin.get('/configs/prompted'), 404, 'not_found');
  });

  it('PATCH /v1/configs refuses it and keeps the stored version', async () => {
    const created = await admin.post('/configs', { slug: 'plain', config: target() });
    expect(created.status, created.text).toBe(200);
    const error = expectError(
      await admin.patch('/configs/plain', { config: { ...target(), prompt_id: 'pp-123' } }),
      400,
      'unsupported_parameter',
      'config.prompt_id',
    );
    expect(error.message).toContain('not yet executed by this gateway');
    expect((await admin.get('/configs/plain')).body).toMatchObject({ version: 1 });
    expect((await chatWith('plain')).status).toBe(200);
  });

  it('a config stored before the refusal existed is refused when a request names it', async () => {
    const { store } = gateway.server.deps;
    const workspace = gateway.server.bootstrap.workspace;
    await store.createConfig({
      organisation_id: workspace.organisation_id,
      workspace_id: workspace.id,
      slug: 'legacy-prompted',
      name: 'legacy-prompted',
      config: { ...target(), prompt_id: 'pp-1' },
    });
    const before = fake.requests.length;
    await expectRefusal(await chatWith('legacy-prompted'), 'config.prompt_id');
    expect(fake.requests.length).toBe(before);
  });

  it('POST /v1/configs validates the checks of a stored config: a bad check is a 400 naming it', async () => {
    expectError(
      await admin.post('/configs', {
        slug: 'bad-check',
        config: { ...target(), output_guardrails: [{ 'default.wordCount': { minWords: -1 } }] },
      }),
      400,
      'invalid_config',
      'config.output_guardrails[0].default.wordCount.minWords',
    );
  });
});
