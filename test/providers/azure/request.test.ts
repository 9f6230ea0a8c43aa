import { describe, expect, it } from 'vitest';
import { azureAIAdapter } from '../../../src/providers/azure-ai/index.js';
import { azureOpenAIAdapter } from '../../../src/providers/azure-openai/index.js';
import { findAdapter } from '../../../src/providers/registry.js';
import type { UpstreamRequest } from '../../../src/providers/types.js';
import { azureRequest } from './helpers.js';
import { buildRequest } from '../operations.js';

const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };

async function openai(body: Record<string, unknown>, options: Parameters<typeof azureRequest>[2] = {}) {
  return (await buildRequest(
    azureOpenAIAdapter,
    azureRequest('azure-openai', body, options),
  )) as UpstreamRequest;
}

async function ai(body: Record<string, unknown>, options: Parameters<typeof azureRequest>[2] = {}) {
  return (await buildRequest(azureAIAdapter, azureRequest('azure-ai', body, options))) as UpstreamRequest;
}

describe('Azure OpenAI request', () => {
  it('is found by its id and the cloudd alias', () => {
    expect(findAdapter('azure-openai')).toBe(azureOpenAIAdapter);
    expect(findAdapter('cloudd')).toBe(azureOpenAIAdapter);
    expect(findAdapter('azure-ai')).toBe(azureAIAdapter);
  });

  it('addresses the deployment with the api-version, each endpoint on its path', async () => {
    expect((await openai(chat)).url).toBe(
      'https://contoso.openai.azure.com/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21',
    );
    expect((await openai({ model: 'x', prompt: 'p' }, { endpoint: 'completions' })).url).toBe(
      'https://contoso.openai.azure.com/openai/deployments/gpt4o/completions?api-version=2024-10-21',
    );
    const embed = await openai(
      { model: 'x', input: 'a' },
      {
        endpoint: 'embeddings',
        target: {
          resource_name: 'r2',
          cloudd_resource_name: undefined,
          deployment_id: 'emb',
          cloudd_deployment_name: undefined,
          api_version: '2024-06-01',
          cloudd_api_version: undefined,
        },
      },
    );
    expect(embed.url).toBe(
      'https://r2.openai.azure.com/openai/deployments/emb/embeddings?api-version=2024-06-01',
    );
  });

  it('sends the OpenAI body, without the gateway-only thinking option', async () => {
    const upstream = await openai({
      ...chat,
      temperature: 0.2,
      thinking: { type: 'enabled', budget_tokens: 10 },
    });
    expect(JSON.parse(String(upstream.body))).toEqual({ ...chat, temperature: 0.2 });
    expect(upstream.headers['content-type']).toBe('application/json');
  });

  it('authenticates with api-key, or with the Bearer token the api_key carries', async () => {
    const key = await openai(chat);
    expect(key.headers['api-key']).toBe('azure-test-key');
    expect(key.headers.authorization).toBeUndefined();
    const token = await openai(chat, { target: { api_key: 'Bearer eyJ0eXAi' } });
    expect(token.headers.authorization).toBe('Bearer eyJ0eXAi');
    expect(token.headers['api-key']).toBeUndefined();
  });

  it('sends an Entra ID token given as the key itself (a client signed in with Entra ID) as a bearer token', async () => {
    const jwt =
      'eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJodHRwczovL2NvZ25pdGl2ZXNlcnZpY2VzLmF6dXJlLmNvbSJ9.c2ln';
    const upstream = await openai(chat, { target: { api_key: jwt } });
    expect(upstream.headers.authorization).toBe(`Bearer ${jwt}`);
    expect(upstream.headers['api-key']).toBeUndefined();
  });

  it('uses custom_host as the base and keeps the Azure path', async () => {
    const upstream = await openai(chat, {
      target: { custom_host: 'http://127.0.0.1:4010', cloudd_resource_name: undefined },
    });
    expect(upstream.url).toBe(
      'http://127.0.0.1:4010/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21',
    );
  });

  it('picks the deployment of deployments[] by alias, else the default, each with its api_version', async () => {
    const deployments = [
      { deployment_id: 'dep-mini', alias: 'gpt-4o-mini', api_version: '2024-06-01' },
      { deployment_id: 'dep-main', alias: 'gpt-4o', api_version: '2024-10-21', is_default: true },
    ];
    const target = { deployments, cloudd_deployment_name: undefined, cloudd_api_version: undefined };
    expect((await openai({ ...chat, model: 'gpt-4o-mini' }, { target })).url).toBe(
      'https://contoso.openai.azure.com/openai/deployments/dep-mini/chat/completions?api-version=2024-06-01',
    );
    expect((await openai({ ...chat, model: 'something-else' }, { target })).url).toContain(
      '/deployments/dep-main/',
    );
    const noDefault = { ...target, deployments: deployments.map((d) => ({ ...d, is_default: false })) };
    await expect(openai({ ...chat, model: 'unknown' }, { target: noDefault })).rejects.toMatchObject({
      status: 400,
      param: 'model',
    });
  });

  it.each([
    ['cloudd_resource_name', { cloudd_resource_name: undefined }],
    ['cloudd_deployment_name', { cloudd_deployment_name: undefined }],
    ['cloudd_api_version', { cloudd_api_version: undefined }],
    ['api_key', { api_key: undefined }],
  ])('refuses a target without %s, naming it', async (param, target) => {
    await expect(openai(chat, { target })).rejects.toMatchObject({
      code: 'provider_config_error',
      param,
      status: 400,
    });
  });

  it.each(['my resource', 'contoso.evil.example', '-contoso', 'a/b'])(
    'refuses a resource name %j that cannot be a host name, naming it',
    async (name) => {
      await expect(openai(chat, { target: { cloudd_resource_name: name } })).rejects.toMatchObject({
        code: 'provider_config_error',
        param: 'cloudd_resource_name',
        status: 400,
      });
    },
  );

  it('builds a pass-through under /openai with the api-version', async () => {
    const upstream = await azureOpenAIAdapter.buildPassthrough({
      method: 'GET',
      path: '/files',
      headers: { authorization: 'Bearer client-key' },
      target: {
        provider: 'azure-openai',
        api_key: 'k',
        cloudd_resource_name: 'contoso',
        cloudd_api_version: '2024-10-21',
      },
    });
    expect(upstream.url).toBe('https://contoso.openai.azure.com/openai/files?api-version=2024-10-21');
    expect(upstream.headers).toEqual({ 'api-key': 'k' });
  });
});

describe('Azure OpenAI pass-through api-version', () => {
  const passthrough = async (path: string, target: Record<string, unknown>) =>
    (
      await azureOpenAIAdapter.buildPassthrough({
        method: 'POST',
        path,
        headers: {},
        target: { provider: 'azure-openai', api_key: 'k', cloudd_resource_name: 'contoso', ...target },
      })
    ).url;

  it("keeps the client's own api-version", async () => {
    expect(
      await passthrough('/deployments/d/chat/completions?api-version=2025-04-01-preview', {
        cloudd_api_version: '2024-10-21',
      }),
    ).toBe(
      'https://contoso.openai.azure.com/openai/deployments/d/chat/completions?api-version=2025-04-01-preview',
    );
  });

  it("adds none to a path of Azure's v1 API, which refuses a dated version", async () => {
    const target = { cloudd_api_version: '2024-10-21' };
    expect(await passthrough('/v1/responses', target)).toBe(
      'https://contoso.openai.azure.com/openai/v1/responses',
    );
    expect(await passthrough('/v1/chat/completions?api-version=preview', target)).toBe(
      'https://contoso.openai.azure.com/openai/v1/chat/completions?api-version=preview',
    );
  });

  it("takes the api_version of the deployments[] entry the path names, else the default entry's", async () => {
    const deployments = [
      { alias: 'gpt-4o', deployment_id: 'gpt4o-eu', api_version: '2024-10-21', is_default: true },
      { alias: 'o3', deployment_id: 'o3-eu', api_version: '2025-04-01-preview' },
    ];
    expect(await passthrough('/deployments/o3-eu/chat/completions', { deployments })).toBe(
      'https://contoso.openai.azure.com/openai/deployments/o3-eu/chat/completions?api-version=2025-04-01-preview',
    );
    expect(await passthrough('/files', { deployments })).toBe(
      'https://contoso.openai.azure.com/openai/files?api-version=2024-10-21',
    );
  });

  it("a target naming no version gets the default of Azure's own APIs rather than Azure's 404", async () => {
    expect(await passthrough('/batches', {})).toBe(
      'https://contoso.openai.azure.com/openai/batches?api-version=2024-10-21',
    );
  });
});

describe('Azure AI model inference pass-through', () => {
  it("adds no api-version to a path of Azure's v1 API", async () => {
    const upstream = await azureAIAdapter.buildPassthrough({
      method: 'POST',
      path: '/openai/v1/chat/completions',
      headers: {},
      target: { provider: 'azure-ai', api_key: 'k', custom_host: 'https://hub.services.ai.azure.com' },
    });
    expect(upstream.url).toBe('https://hub.services.ai.azure.com/openai/v1/chat/completions');
  });
});

describe('Azure AI model inference request', () => {
  it('calls a serverless endpoint with the default api-version and a bearer key', async () => {
    const upstream = await ai({ ...chat, stream: true });
    expect(upstream.url).toBe(
      'https://my-llama.eastus2.models.ai.azure.com/chat/completions?api-version=2024-05-01-preview',
    );
    expect(upstream.headers.authorization).toBe('Bearer azure-test-key');
    expect(upstream.headers['extra-parameters']).toBe('pass-through');
    expect(upstream.headers.accept).toBe('text/event-stream');
    const embed = await ai(
      { model: 'cohere-embed', input: 'a' },
      { endpoint: 'embeddings', target: { cloudd_api_version: '2025-04-01' } },
    );
    expect(embed.url).toBe('https://my-llama.eastus2.models.ai.azure.com/embeddings?api-version=2025-04-01');
  });

  it('scores chat on a managed endpoint, routed to the named deployment', async () => {
    const upstream = await ai(chat, {
      target: { cloudd_deployment_type: 'managed', cloudd_deployment_name: 'blue' },
    });
    expect(upstream.url).toBe('https://my-llama.eastus2.inference.ml.azure.com/score');
    expect(upstream.headers['azureml-model-deployment']).toBe('blue');
    await expect(
      ai(
        { model: 'm', input: 'a' },
        { endpoint: 'embeddings', target: { cloudd_deployment_type: 'managed' } },
      ),
    ).rejects.toMatchObject({ code: 'unsupported_endpoint' });
  });

  it.each([
    ['cloudd_endpoint_name', { cloudd_endpoint_name: undefined }],
    ['cloudd_region', { cloudd_region: undefined }],
  ])('refuses a target without %s, naming it', async (param, target) => {
    await expect(ai(chat, { target })).rejects.toMatchObject({ code: 'provider_config_error', param });
  });

  it.each([
    ['cloudd_region', { cloudd_region: 'east us' }],
    ['cloudd_endpoint_name', { cloudd_endpoint_name: 'my.endpoint' }],
  ])('refuses a %s that cannot be part of a host name, naming it', async (param, target) => {
    await expect(ai(chat, { target })).rejects.toMatchObject({
      code: 'provider_config_error',
      param,
      status: 400,
    });
  });

  it('uses custom_host as the base', async () => {
    const upstream = await ai(chat, { target: { custom_host: 'http://127.0.0.1:4011' } });
    expect(upstream.url).toBe('http://127.0.0.1:4011/chat/completions?api-version=2024-05-01-preview');
  });
});
