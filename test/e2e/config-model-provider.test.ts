/**
 * `override_params.model` written `@<provider_slug>/<model>`, as configs made for the reference gateway's
 * model catalog write it (`{"override_params": {"model": "@openai-prod/gpt-4o"}, "weight": 0.7}`): a node
 * that names no provider, virtual key or custom_host of its own is sent to that catalog provider, with the
 * model after the slash.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { addCatalogProvider, client } from '../management/http.js';

let gateway: TestGateway;
let fakeA: FakeUpstream;
let fakeB: FakeUpstream;

beforeAll(async () => {
  fakeA = await startFakeOpenAI({ name: 'catalog-a' });
  fakeB = await startFakeOpenAI({ name: 'catalog-b' });
  gateway = await startGateway();
  const admin = client(gateway.url, gateway.adminKey);
  for (const [slug, fake, key] of [
    ['model-cat-a', fakeA, 'sk-catalog-a'],
    ['model-cat-b', fakeB, 'sk-catalog-b'],
  ] as const) {
    await addCatalogProvider(admin, slug, key, fake.url);
  }
});

afterAll(async () => {
  await gateway?.close();
  await fakeA?.close();
  await fakeB?.close();
});

function sdk(config: unknown): OpenAI {
  return new OpenAI({
    apiKey: 'sk-client',
    baseURL: gateway.url,
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-config': JSON.stringify(config) },
  });
}

const ask = (config: unknown) =>
  sdk(config).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });

function lastRequest(fake: FakeUpstream): { model: unknown; authorization: unknown } {
  const request = fake.requests.at(-1)!;
  return { model: (request.body as { model?: unknown }).model, authorization: request.headers.authorization };
}

describe('override_params.model as @provider_slug/model', () => {
  it('sends a root config to the catalog provider the model names, with the model after the slash', async () => {
    fakeA.reset();
    await ask({ retry: { attempts: 1 }, override_params: { model: '@model-cat-a/gpt-4o' } });
    expect(lastRequest(fakeA)).toEqual({ model: 'gpt-4o', authorization: 'Bearer sk-catalog-a' });
  });

  it('makes a load-balanced target of one that names nothing else', async () => {
    fakeA.reset();
    fakeB.reset();
    await ask({
      strategy: { mode: 'loadbalance' },
      targets: [
        { override_params: { model: '@model-cat-b/gpt-4.1' }, weight: 1 },
        { override_params: { model: '@model-cat-a/gpt-4o' }, weight: 0 },
      ],
    });
    expect(fakeA.requests).toHaveLength(0);
    expect(lastRequest(fakeB)).toEqual({ model: 'gpt-4.1', authorization: 'Bearer sk-catalog-b' });
  });

  it("gives such a target its catalog provider's credential, none of its parent's", async () => {
    fakeA.reset();
    fakeB.reset();
    await ask({
      strategy: { mode: 'fallback' },
      provider: 'openai',
      api_key: 'sk-parent',
      custom_host: fakeA.url,
      targets: [{ override_params: { model: '@model-cat-b/gpt-4.1' } }],
    });
    expect(fakeA.requests).toHaveLength(0);
    expect(lastRequest(fakeB)).toEqual({ model: 'gpt-4.1', authorization: 'Bearer sk-catalog-b' });
  });

  it('leaves the model as written on a node that names its provider', async () => {
    fakeA.reset();
    await ask({
      provider: 'openai',
      api_key: 'sk-own',
      custom_host: fakeA.url,
      override_params: { model: '@model-cat-b/gpt-4.1' },
    });
    expect(lastRequest(fakeA)).toEqual({ model: '@model-cat-b/gpt-4.1', authorization: 'Bearer sk-own' });
  });

  it('refuses to store a config whose model names a catalog provider the workspace does not have, naming the model', async () => {
    const admin = client(gateway.url, gateway.adminKey);
    const stored = await admin.post('/configs', {
      slug: 'model-names-missing',
      config: {
        strategy: { mode: 'fallback' },
        targets: [{ override_params: { model: '@no-such-slug/gpt-4o' } }],
      },
    });
    expect(stored.status, stored.text).toBeGreaterThanOrEqual(400);
    expect(stored.body.error).toMatchObject({ param: 'config.targets[0].override_params.model' });
    const kept = await admin.post('/configs', {
      slug: 'model-names-catalog',
      config: {
        strategy: { mode: 'fallback' },
        targets: [{ override_params: { model: '@model-cat-a/gpt-4o' } }],
      },
    });
    expect(kept.status, kept.text).toBe(200);
  });

  it('answers 404 naming the model when the workspace has no such catalog provider', async () => {
    const error = await ask({ override_params: { model: '@no-such-slug/gpt-4o' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect((error as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({
      code: 'virtual_key_not_found',
      param: 'config.override_params.model',
    });
  });
  it('counts a stored config whose model names a catalog provider among what uses it: its PATCH to another provider and its DELETE are 409', async () => {
    const admin = client(gateway.url, gateway.adminKey);
    const created = await admin.post('/providers', {
      slug: 'model-cat-used',
      provider: 'openai',
      api_key: 'sk-catalog-used',
      custom_host: fakeA.url,
    });
    expect(created.status, created.text).toBe(200);
    const stored = await admin.post('/configs', {
      slug: 'model-names-used',
      config: {
        strategy: { mode: 'fallback' },
        targets: [{ override_params: { model: '@model-cat-used/gpt-4o' } }],
      },
    });
    expect(stored.status, stored.text).toBe(200);

    const moved = await admin.patch('/providers/model-cat-used', {
      provider: 'anthropic',
      api_key: 'sk-ant-catalog-used',
    });
    expect(moved.status, moved.text).toBe(409);
    expect(moved.body.error.message).toContain(
      'configs "model-names-used" (config.targets[0].override_params.model)',
    );
    const deleted = await admin.delete('/providers/model-cat-used');
    expect(deleted.status, deleted.text).toBe(409);
    expect(deleted.body.error.message).toContain(
      'configs "model-names-used" (config.targets[0].override_params.model)',
    );

    expect((await admin.delete('/configs/model-names-used')).status).toBe(200);
    expect((await admin.delete('/providers/model-cat-used')).status).toBe(200);
  });
});
