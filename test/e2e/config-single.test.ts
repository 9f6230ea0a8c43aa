/**
 * Single-provider configs end to end: override_params, forward_headers, request_timeout (408), OpenAI's
 * organization/project headers, and credentials from a virtual key, an @slug and a stored config.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { postChat, startGateway, type TestGateway } from '../helpers/gateway.js';

let gateway: TestGateway;
let fake: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'single' });
  gateway = await startGateway();
});
afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

function clientWith(headers: Record<string, string>): OpenAI {
  return new OpenAI({
    baseURL: gateway.url,
    apiKey: 'unused-by-config',
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-api-key': gateway.adminKey, ...headers },
  });
}

const ask = (client: OpenAI, content = 'hi') =>
  client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });

/** A chat request straight over HTTP, with an inline config for the fake (and `more` of its keys). */
const chatOverHttp = (content: string, more: Record<string, unknown> = {}) =>
  postChat(
    gateway,
    { provider: 'openai', api_key: 'sk-config', custom_host: fake.url, ...more },
    { model: 'gpt-4o-mini', messages: [{ role: 'user', content }] },
  );

describe('single-provider config', () => {
  it('applies override_params over the client body', async () => {
    const client = clientWith({
      'x-gateway-config': JSON.stringify({
        provider: 'openai',
        api_key: 'sk-config',
        custom_host: fake.url,
        override_params: { model: 'gpt-4o', temperature: 0.2 },
      }),
    });
    const answer = await ask(client);
    const sent = fake.requests.at(-1)?.body as Record<string, unknown>;
    expect(sent.model).toBe('gpt-4o');
    expect(sent.temperature).toBe(0.2);
    expect(answer.model).toBe('gpt-4o');
    expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer sk-config');
  });

  it('sends a whole answer with its length, not as a chunked body', async () => {
    // Non-ASCII text: the length is in bytes, not characters.
    const response = await chatOverHttp('héllo wörld ✓');
    expect(response.status).toBe(200);
    expect(response.headers.get('transfer-encoding')).toBeNull();
    const body = Buffer.from(await response.arrayBuffer());
    expect(response.headers.get('content-length')).toBe(String(body.length));
    expect(JSON.parse(body.toString('utf8')).choices[0].message.content).toContain('héllo wörld ✓');
  });

  it('forwards only the headers named in forward_headers', async () => {
    const client = clientWith({
      'x-gateway-config': JSON.stringify({
        provider: 'openai',
        api_key: 'sk-config',
        custom_host: fake.url,
        forward_headers: ['x-team-id'],
      }),
      'x-team-id': 'team-42',
      'x-other-header': 'not-forwarded',
    });
    await ask(client);
    const headers = fake.requests.at(-1)?.headers ?? {};
    expect(headers['x-team-id']).toBe('team-42');
    expect(headers['x-other-header']).toBeUndefined();
    expect(headers['x-gateway-api-key']).toBeUndefined();
  });

  it('answers 408 when the provider does not answer within request_timeout', async () => {
    fake.enqueue({ hang: true });
    const client = clientWith({
      'x-gateway-config': JSON.stringify({
        provider: 'openai',
        api_key: 'sk-config',
        custom_host: fake.url,
        request_timeout: 300,
      }),
    });
    const started = Date.now();
    const error = await ask(client).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(408);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('sends vendora_organization and vendora_project as OpenAI headers', async () => {
    const client = clientWith({
      'x-gateway-config': JSON.stringify({
        provider: 'vendora',
        api_key: 'sk-config',
        custom_host: fake.url,
        vendora_organization: 'org-123',
        vendora_project: 'proj-456',
      }),
    });
    await ask(client);
    const headers = fake.requests.at(-1)?.headers ?? {};
    expect(headers['openai-organization']).toBe('org-123');
    expect(headers['openai-project']).toBe('proj-456');
  });

  it('takes credentials from a virtual key, an @slug and a stored config', async () => {
    const store = gateway.server.deps.store;
    const workspace = gateway.server.bootstrap.workspace;
    const base = {
      workspace_id: workspace.id,
      organisation_id: workspace.organisation_id,
      provider: 'openai',
    };
    await store.createCredential({
      ...base,
      kind: 'virtual_key',
      slug: 'vk-main',
      name: 'main',
      secret: { api_key: 'sk-from-virtual-key', custom_host: fake.url },
    });
    await store.createCredential({
      ...base,
      kind: 'provider',
      slug: 'openai-prod',
      name: 'prod',
      secret: { api_key: 'sk-from-slug', custom_host: fake.url },
    });
    await store.createConfig({
      workspace_id: workspace.id,
      organisation_id: workspace.organisation_id,
      slug: 'cfg-main',
      name: 'main',
      config: { virtual_key: 'vk-main', override_params: { max_tokens: 7 } },
    });

    await ask(clientWith({ 'x-gateway-virtual-key': 'vk-main' }));
    expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer sk-from-virtual-key');

    await ask(clientWith({ 'x-gateway-provider': '@openai-prod' }));
    expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer sk-from-slug');

    await ask(clientWith({ 'x-gateway-config': 'cfg-main' }));
    expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer sk-from-virtual-key');
    expect((fake.requests.at(-1)?.body as Record<string, unknown>).max_tokens).toBe(7);

    const missing = await ask(clientWith({ 'x-gateway-virtual-key': 'nope' })).catch((err: unknown) => err);
    expect((missing as InstanceType<typeof OpenAI.APIError>).status).toBe(404);
  });
});

describe('override_params are checked like a body', () => {
  it.each([
    [{ temperature: 5 }, 'config.override_params.temperature'],
    [{ n: 0 }, 'config.override_params.n'],
    [{ stop: ['a', 'b', 'c', 'd', 'e'] }, 'config.override_params.stop'],
    [{ stream: true }, 'config.override_params.stream'],
    [{ stream: false }, 'config.override_params.stream'],
    [{ stream_options: { include_usage: false } }, 'config.override_params.stream_options'],
  ])('%j → 400 naming %s', async (override_params, param) => {
    const before = fake.requests.length;
    const response = await chatOverHttp('hi', { override_params });
    const body = (await response.json()) as { error: { param: string } };
    expect(response.status).toBe(400);
    expect(body.error.param).toBe(param);
    expect(fake.requests.length).toBe(before);
  });

  it('override_params.stream on a streamed request → 400 naming it, not the stream_options the gateway added', async () => {
    const response = await postChat(
      gateway,
      { provider: 'openai', api_key: 'sk-config', custom_host: fake.url, override_params: { stream: false } },
      { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] },
    );
    const body = (await response.json()) as { error: { param: string } };
    expect(response.status).toBe(400);
    expect(body.error.param).toBe('config.override_params.stream');
  });
});

describe('stored credentials stay with their host', () => {
  it('refuses a custom_host that would send a virtual key elsewhere, and never calls it', async () => {
    const store = gateway.server.deps.store;
    const workspace = gateway.server.bootstrap.workspace;
    await store.createCredential({
      workspace_id: workspace.id,
      organisation_id: workspace.organisation_id,
      provider: 'openai',
      kind: 'virtual_key',
      slug: 'vk-pinned',
      name: 'pinned',
      secret: { api_key: 'sk-pinned-secret', custom_host: fake.url },
    });
    const elsewhere = await startFakeOpenAI({ name: 'elsewhere' });
    try {
      const cases: Array<Record<string, string>> = [
        { 'x-gateway-virtual-key': 'vk-pinned', 'x-gateway-custom-host': elsewhere.url },
        { 'x-gateway-config': JSON.stringify({ virtual_key: 'vk-pinned', custom_host: elsewhere.url }) },
      ];
      for (const headers of cases) {
        const error = await ask(clientWith(headers)).catch((err: unknown) => err);
        expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
        expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('custom_host_refused');
      }
      expect(elsewhere.requests).toHaveLength(0);
      // Its own host still works.
      await ask(clientWith({ 'x-gateway-virtual-key': 'vk-pinned' }));
      expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer sk-pinned-secret');
    } finally {
      await elsewhere.close();
    }
  });
});
