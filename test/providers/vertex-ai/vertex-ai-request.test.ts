/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
import { describe, expect, it } from 'vitest';
import { GatewayError, ProviderError } from '../../../src/core/errors.js';
import type { EmbeddingResponse } from '../../../src/core/openai-types.js';
import type { AdapterRequest, ProviderTarget } from '../../../src/providers/types.js';
import { vertexAIAdapter } from '../../../src/providers/vertex-ai/index.js';
import { findAdapter } from '../../../src/providers/registry.js';
import { expectOpenAPIValid } from '../../helpers/openapi.js';
import { readGoogleFixture } from '../../fakes/google/fixtures.js';
import { chatRequest } from '../google/helpers.js';
import { buildRequest, parseResponse } from '../operations.js';

const base: ProviderTarget = {
  provider: 'vertex-ai',
  cloudb_project_id: 'proj-1',
  cloudb_region: 'us-central1',
};

function vertexRequest(
  body: Record<string, unknown>,
  overrides: Partial<AdapterRequest> = {},
): AdapterRequest {
  return chatRequest(body, { target: base, auth: { accessToken: 'ya29.token' }, ...overrides });
}

async function build(body: Record<string, unknown>, overrides: Partial<AdapterRequest> = {}) {
  const upstream = await buildRequest(vertexAIAdapter, vertexRequest(body, overrides));
  return { upstream, body: JSON.parse(String(upstream.body)) as Record<string, any> };
}

describe('vertex-ai adapter', () => {
  it('is registered under its id and the cloudb alias', () => {
    expect(findAdapter('vertex-ai')).toBe(vertexAIAdapter);
    expect(findAdapter('cloudb')).toBe(vertexAIAdapter);
  });

  it('addresses Gemini models in the region with the bearer token', async () => {
    const { upstream, body } = await build({ model: 'gemini-2.5-flash' });
    expect(upstream.url).toBe(
      'https://us-central1-aiplatform.googleapis.com/v1/projects/proj-1/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent',
    );
    expect(upstream.headers.authorization).toBe('Bearer ya29.token');
    expect(body.contents).toEqual([{ role: 'user', parts: [{ text: 'Hi' }] }]);
  });

  it('sends a Gemini tool result of several text parts one line each', async () => {
    const { body } = await build({
      model: 'gemini-2.5-flash',
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{}' } }],
        },
        {
          role: 'tool',
          tool_call_id: 'call_a',
          content: [
            { type: 'text', text: '21C' },
            { type: 'text', text: 'sunny' },
          ],
        },
      ],
    });
    expect(body.contents[2].parts[0].functionResponse.response).toEqual({ content: '21C\nsunny' });
  });

  it('uses the global endpoint for the global region, and streams with alt=sse', async () => {
    const { upstream } = await build(
      { model: 'gemini-2.5-pro', stream: true },
      { target: { ...base, cloudb_region: 'global' } },
    );
    expect(upstream.url).toBe(
      'https://aiplatform.googleapis.com/v1/projects/proj-1/locations/global/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse',
    );
  });

  it.each(['us', 'eu'])('uses the multi-region endpoint of %s', async (region) => {
    const { upstream } = await build(
      { model: 'gemini-2.5-flash' },
      { target: { ...base, cloudb_region: region } },
    );
    expect(upstream.url).toBe(
      `https://aiplatform.${region}.rep.googleapis.com/v1/projects/proj-1/locations/${region}/publishers/google/models/gemini-2.5-flash:generateContent`,
    );
  });

  it.each([
    'publishers/google/models/gemini-2.5-flash',
    'projects/proj-1/locations/us-central1/publishers/google/models/gemini-2.5-flash',
    'models/gemini-2.5-flash',
  ])('addresses a Gemini model named %s by its id', async (model) => {
    const { upstream } = await build({ model });
    expect(upstream.url).toBe(
      'https://us-central1-aiplatform.googleapis.com/v1/projects/proj-1/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent',
    );
  });

  it('sends a Claude model named as a resource to the anthropic publisher', async () => {
    const { upstream, body } = await build({
      model: 'publishers/anthropic/models/claude-3-5-sonnet-v2@20241022',
      max_tokens: 10,
    });
    expect(upstream.url).toBe(
      'https://us-central1-aiplatform.googleapis.com/v1/projects/proj-1/locations/us-central1/publishers/anthropic/models/claude-3-5-sonnet-v2%4020241022:rawPredict',
    );
    expect(body.anthropic_version).toBe('vertex-2023-10-16');
  });

  it('keeps the provider path under custom_host', async () => {
    const { upstream } = await build({}, { target: { ...base, custom_host: 'http://127.0.0.1:1234' } });
    expect(upstream.url).toBe(
      'http://127.0.0.1:1234/v1/projects/proj-1/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent',
    );
  });

  it.each(['cloudb_project_id', 'cloudb_region'] as const)(
    'refuses a target without %s, naming it',
    async (key) => {
      const target = { ...base };
      delete target[key];
      const error = await Promise.resolve()
        .then(() => buildRequest(vertexAIAdapter, vertexRequest({}, { target })))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GatewayError);
      expect((error as GatewayError).status).toBe(400);
      expect((error as GatewayError).param).toBe(key);
    },
  );

  it('refuses cloudb_shared_request_type beside dedicated, as met in a call (a virtual key and its node)', async () => {
    const target: ProviderTarget = {
      ...base,
      cloudb_region: 'global',
      cloudb_request_type: 'dedicated',
      cloudb_shared_request_type: 'flex',
    };
    const error = await Promise.resolve()
      .then(() => buildRequest(vertexAIAdapter, vertexRequest({}, { target })))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({
      status: 400,
      code: 'provider_config_error',
      param: 'cloudb_shared_request_type',
    });
    expect((error as GatewayError).message).toContain("cannot be given with cloudb_request_type 'dedicated'");
  });

  it('sends a bearer token given as api_key when there is no service account', async () => {
    const { upstream } = await build({}, { target: { ...base, api_key: 'ya29.static' }, auth: undefined });
    expect(upstream.headers.authorization).toBe('Bearer ya29.static');
  });

  it('sends claude-* models to rawPredict with the Anthropic body for Vertex', async () => {
    const { upstream, body } = await build({ model: 'claude-sonnet-4-5@20250929', max_tokens: 100 });
    expect(upstream.url).toBe(
      'https://us-central1-aiplatform.googleapis.com/v1/projects/proj-1/locations/us-central1/publishers/anthropic/models/claude-sonnet-4-5%4020250929:rawPredict',
    );
    expect(body.anthropic_version).toBe('vertex-2023-10-16');
    expect(body.model).toBeUndefined();
    expect(body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }]);
    expect(body.max_tokens).toBe(100);
    const streamed = await build({ model: 'claude-sonnet-4-5', stream: true });
    expect(streamed.upstream.url).toMatch(
      /publishers\/anthropic\/models\/claude-sonnet-4-5:streamRawPredict$/,
    );
    expect(streamed.body.stream).toBe(true);
  });

  it('treats anthropic.claude-* names as Anthropic models, addressed without the prefix', async () => {
    const model = 'anthropic.claude-3-5-sonnet@20240620';
    const { upstream, body } = await build({ model, max_tokens: 100 });
    expect(upstream.url).toBe(
      'https://us-central1-aiplatform.googleapis.com/v1/projects/proj-1/locations/us-central1/publishers/anthropic/models/claude-3-5-sonnet%4020240620:rawPredict',
    );
    expect(body.anthropic_version).toBe('vertex-2023-10-16');
    expect(body.model).toBeUndefined();
    expect(body.max_tokens).toBe(100);
    const streamed = await build({ model, stream: true });
    expect(streamed.upstream.url).toMatch(
      /publishers\/anthropic\/models\/claude-3-5-sonnet%4020240620:streamRawPredict$/,
    );

    const req = vertexRequest({ model });
    const answer = parseResponse(vertexAIAdapter, req, {
      status: 200,
      headers: {},
      body: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-3-5-sonnet-20240620',
        content: [{ type: 'text', text: 'Hello' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 3, output_tokens: 1 },
      },
    }) as any;
    expectOpenAPIValid('CreateChatCompletionResponse', answer);
    expect(answer.choices[0].message.content).toBe('Hello');
    const error = vertexAIAdapter.parseError(req, {
      status: 529,
      headers: {},
      bodyText: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
    });
    expect([error.status, error.message]).toEqual([529, 'Overloaded']);
  });

  it('embeds through predict and reads the recorded answer', async () => {
    const req: AdapterRequest = {
      ...vertexRequest({}),
      endpoint: 'embeddings',
      body: { model: 'text-embedding-005', input: ['a', 'bb'], dimensions: 5 },
    };
    const upstream = await buildRequest(vertexAIAdapter, req);
    expect(upstream.url).toMatch(/publishers\/google\/models\/text-embedding-005:predict$/);
    expect(JSON.parse(String(upstream.body))).toEqual({
      instances: [{ content: 'a' }, { content: 'bb' }],
      parameters: { outputDimensionality: 5 },
    });
    const recorded = readGoogleFixture('google-vertex-embedding.json', 'google-vertex') as any;
    const response = parseResponse(vertexAIAdapter, req, {
      status: 200,
      headers: {},
      body: recorded,
    }) as EmbeddingResponse;
    expectOpenAPIValid('CreateEmbeddingResponse', response);
    expect(response.data.map((d) => d.embedding)).toEqual(
      recorded.predictions.map((p: any) => p.embeddings.values),
    );
    expect(response.usage).toEqual({ prompt_tokens: 11, total_tokens: 11 });
  });

  it('embeds with gemini-embedding-001 through predict and newer Gemini embedding models through embedContent', async () => {
    const embed = (model: string, input: string | string[], dimensions?: number): AdapterRequest => ({
      ...vertexRequest({}),
      endpoint: 'embeddings',
      body: { model, input, ...(dimensions ? { dimensions } : {}) },
    });
    const legacy = await buildRequest(vertexAIAdapter, embed('gemini-embedding-001', 'a'));
    expect(legacy.url).toMatch(/models\/gemini-embedding-001:predict$/);
    expect(JSON.parse(String(legacy.body))).toEqual({ instances: [{ content: 'a' }] });

    for (const model of [
      'gemini-embedding-2',
      'gemini-embedding-2-preview',
      'publishers/google/models/gemini-embedding-2',
    ]) {
      const req = embed(model, ['hello'], 256);
      const upstream = await buildRequest(vertexAIAdapter, req);
      expect(upstream.url).toMatch(/publishers\/google\/models\/gemini-embedding-2(-preview)?:embedContent$/);
      expect(JSON.parse(String(upstream.body))).toEqual({
        content: { parts: [{ text: 'hello' }] },
        outputDimensionality: 256,
      });
      const response = parseResponse(vertexAIAdapter, req, {
        status: 200,
        headers: {},
        body: {
          embedding: { values: [0.1, -0.2, 0.3] },
          usageMetadata: { promptTokenCount: 2, totalTokenCount: 2 },
        },
      }) as EmbeddingResponse;
      expectOpenAPIValid('CreateEmbeddingResponse', response);
      expect(response.data).toEqual([{ object: 'embedding', index: 0, embedding: [0.1, -0.2, 0.3] }]);
      expect(response.usage).toEqual({ prompt_tokens: 2, total_tokens: 2 });
    }
    // embedContent takes one content a call: the gateway sends a list one input at a time
    expect(
      vertexAIAdapter.capabilities.embeddingInputsPerCall?.(
        embed('gemini-embedding-2', ['a', 'b']) as AdapterRequest<'embeddings'>,
      ),
    ).toBe(1);
  });

  it("reads Google's error shape for Gemini and Vertex failures, Anthropic's for Anthropic answers", () => {
    const gemini = vertexAIAdapter.parseError(vertexRequest({}), {
      status: 429,
      headers: {},
      bodyText: JSON.stringify(readGoogleFixture('google-429-retry-info.json')),
    });
    expect([gemini.status, gemini.retryAfterMs]).toEqual([429, 34400]);
    const claude = vertexRequest({ model: 'claude-sonnet-4-5' });
    const anthropic = vertexAIAdapter.parseError(claude, {
      status: 529,
      headers: {},
      bodyText: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
    });
    expect(anthropic).toBeInstanceOf(ProviderError);
    expect([anthropic.status, anthropic.message]).toEqual([529, 'Overloaded']);
    const quota = vertexAIAdapter.parseError(claude, {
      status: 429,
      headers: {},
      bodyText: JSON.stringify({
        error: { code: 429, message: 'Quota exceeded', status: 'RESOURCE_EXHAUSTED' },
      }),
    });
    expect([quota.status, quota.code, quota.message]).toEqual([429, 'resource_exhausted', 'Quota exceeded']);
  });
});
