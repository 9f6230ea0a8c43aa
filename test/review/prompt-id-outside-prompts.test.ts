/**
 * `prompt_id` is run by prompt completions only (test/prompts/prompt-targets.test.ts). A config naming it
 * may be stored, but a chat, completion or embedding call under it is refused — inline or stored, at the
 * root or in a target — and never routed as if the key were not there.
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
    message: `${param} applies to prompt completions only (POST /v1/prompts/{promptId}/completions): remove it, or call a prompt`,
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
  beforeAll(async () => {
    // A stored config may name only prompts the workspace has.
    for (const slug of ['pp-1', 'pp-2']) {
      const stored = await admin.post('/prompts', {
        slug,
        string: JSON.stringify([{ role: 'user', content: 'hi' }]),
      });
      expect(stored.status, stored.text).toBe(200);
    }
  });

  it('POST and PATCH /v1/configs store it, at the root and in targets', async () => {
    const nested = {
      strategy: { mode: 'fallback' },
      targets: [target(), { ...target(), prompt_id: 'pp-1' }],
    };
    const created = await admin.post('/configs', { slug: 'prompted', config: nested });
    expect(created.status, created.text).toBe(200);
    const updated = await admin.patch('/configs/prompted', { config: { ...target(), prompt_id: 'pp-2' } });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({ version: 2, config: { prompt_id: 'pp-2' } });
  });

  it('a chat completion under a stored config naming it is refused, and calls nobody', async () => {
    expect(
      (await admin.post('/configs', { slug: 'stored-prompted', config: { ...target(), prompt_id: 'pp-1' } }))
        .status,
    ).toBe(200);
    const before = fake.requests.length;
    await expectRefusal(await chatWith('stored-prompted'), 'config.prompt_id');
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
