/**
 * A body `model` written `@<provider_slug>/<model>`, as clients of the reference gateway's model catalog
 * write it with only their gateway key (`model: "@openai-prod/gpt-4o"`): a request that names no provider
 * and no config is sent to that catalog provider of the key's workspace, with the model after the slash.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { addCatalogProvider, client } from '../management/http.js';
import { logsOf, traceHeaders } from '../routing/support.js';

let gateway: TestGateway;
let fake: FakeUpstream;
let elsewhere: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'body-catalog' });
  elsewhere = await startFakeOpenAI({ name: 'body-catalog-elsewhere' });
  gateway = await startGateway();
  const admin = client(gateway.url, gateway.adminKey);
  await addCatalogProvider(admin, 'body-cat', 'sk-body-catalog', fake.url);
  const workspace = await admin.post('/workspaces', { name: 'Other', slug: 'body-model-other' });
  expect(workspace.status, workspace.text).toBe(200);
  const other = client(gateway.url, workspace.body.admin_key.key as string);
  await addCatalogProvider(other, 'body-cat-theirs', 'sk-theirs', elsewhere.url);
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
  await elsewhere?.close();
});

function sdk(headers: Record<string, string> = {}): OpenAI {
  return new OpenAI({
    apiKey: 'sk-client',
    baseURL: gateway.url,
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-api-key': gateway.adminKey, ...headers },
  });
}

const messages = [{ role: 'user' as const, content: 'Hi' }];

function lastRequest(upstream: FakeUpstream): { model: unknown; authorization: unknown } {
  const request = upstream.requests.at(-1)!;
  return { model: (request.body as { model?: unknown }).model, authorization: request.headers.authorization };
}

async function refusal(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await call.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return error as InstanceType<typeof OpenAI.APIError>;
}

describe('a body model written @provider_slug/model', () => {
  it('sends a chat completion to the catalog provider, with its credential and the model after the slash', async () => {
    fake.reset();
    const { traceId, headers } = traceHeaders();
    const answer = await sdk(headers).chat.completions.create({ model: '@body-cat/gpt-4o', messages });
    expect(lastRequest(fake)).toEqual({ model: 'gpt-4o', authorization: 'Bearer sk-body-catalog' });
    expect(answer.model).toBe('gpt-4o');
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record).toMatchObject({ model: 'gpt-4o', provider: 'openai', status: 200 });
  });

  it('streams from the catalog provider', async () => {
    fake.reset();
    const stream = await sdk().chat.completions.create({ model: '@body-cat/gpt-4o', messages, stream: true });
    const models = new Set<string>();
    let text = '';
    for await (const chunk of stream) {
      models.add(chunk.model);
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(text.length).toBeGreaterThan(0);
    expect([...models]).toEqual(['gpt-4o']);
    expect(lastRequest(fake)).toEqual({ model: 'gpt-4o', authorization: 'Bearer sk-body-catalog' });
  });

  it('sends embeddings to the catalog provider', async () => {
    fake.reset();
    const answer = await sdk().embeddings.create({ model: '@body-cat/text-embedding-3-small', input: 'Hi' });
    expect(answer.model).toBe('text-embedding-3-small');
    expect(lastRequest(fake)).toEqual({
      model: 'text-embedding-3-small',
      authorization: 'Bearer sk-body-catalog',
    });
  });

  it('answers 404 naming model for a slug the workspace does not have', async () => {
    const error = await refusal(sdk().chat.completions.create({ model: '@no-such-cat/gpt-4o', messages }));
    expect(error.status).toBe(404);
    expect(error.error).toMatchObject({ code: 'virtual_key_not_found', param: 'model' });
  });

  it("answers the same 404 for another workspace's slug, and never calls it", async () => {
    elsewhere.reset();
    const error = await refusal(
      sdk().chat.completions.create({ model: '@body-cat-theirs/gpt-4o', messages }),
    );
    expect(error.status).toBe(404);
    expect(error.error).toMatchObject({ code: 'virtual_key_not_found', param: 'model' });
    expect(elsewhere.requests).toHaveLength(0);
  });

  it('leaves the model as written when a provider header names the provider', async () => {
    fake.reset();
    await sdk({ 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.url }).chat.completions.create({
      model: '@body-cat/gpt-4o',
      messages,
    });
    expect(lastRequest(fake)).toEqual({ model: '@body-cat/gpt-4o', authorization: 'Bearer sk-client' });
  });

  it('still asks for a provider when the model names none', async () => {
    const error = await refusal(sdk().chat.completions.create({ model: 'gpt-4o', messages }));
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ code: 'missing_provider', param: 'x-gateway-provider' });
    expect(error.message).toContain('@<provider_slug>/<model>');
  });
});

describe('the Responses and Messages ingresses', () => {
  it('sends a response to the catalog provider', async () => {
    fake.reset();
    const response = await sdk().responses.create({ model: '@body-cat/gpt-4o', input: 'Hi' });
    expect(response.model).toBe('gpt-4o');
    expect(lastRequest(fake)).toEqual({ model: 'gpt-4o', authorization: 'Bearer sk-body-catalog' });
  });

  it('runs a background response on the catalog provider', async () => {
    fake.reset();
    const client = sdk();
    const queued = await client.responses.create({
      model: '@body-cat/gpt-4o',
      input: 'Hi',
      background: true,
    });
    let response = queued;
    for (let i = 0; i < 100 && (response.status === 'queued' || response.status === 'in_progress'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      response = await client.responses.retrieve(queued.id);
    }
    expect(response).toMatchObject({ status: 'completed', model: 'gpt-4o' });
    expect(lastRequest(fake)).toEqual({ model: 'gpt-4o', authorization: 'Bearer sk-body-catalog' });
  });

  it('sends a Messages request to the catalog provider, as chat', async () => {
    fake.reset();
    const response = await fetch(`${gateway.url}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': gateway.adminKey },
      body: JSON.stringify({ model: '@body-cat/gpt-4o', max_tokens: 16, messages }),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(((await response.json()) as { model: unknown }).model).toBe('gpt-4o');
    expect(lastRequest(fake)).toEqual({ model: 'gpt-4o', authorization: 'Bearer sk-body-catalog' });
  });
});
