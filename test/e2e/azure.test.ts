// Azure OpenAI and Azure AI through the gateway, spoken to with the openai SDK, against the fake Azure.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startFakeAzure, type FakeAzure } from '../fakes/azure/server.js';
import { providerFixturesDir } from '../fakes/cohere/fixtures.js';
import { assembledAzureChatCompletion } from '../fakes/azure/recorded.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';
import { readChatStream } from '../helpers/chat-stream.js';

let gateway: TestGateway;
let fake: FakeAzure;

beforeAll(async () => {
  fake = await startFakeAzure({ deployments: ['gpt4o', 'gpt4o-mini', 'embedding'] });
  gateway = await startGateway();
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

function client(config: Record<string, unknown> = {}): OpenAI {
  return gatewayOpenAI(gateway, {
    provider: 'azure-openai',
    api_key: fake.apiKey,
    custom_host: fake.url,
    cloudd_deployment_name: 'gpt4o',
    cloudd_api_version: '2024-10-21',
    ...config,
  });
}

const last = () => fake.requests.at(-1)!;
const tools: OpenAI.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: {} } } },
  { type: 'function', function: { name: 'cityAttractions', parameters: { type: 'object', properties: {} } } },
];

describe('Azure OpenAI through the gateway', () => {
  it('answers a plain chat completion on the deployment URL with the api-key header', async () => {
    const completion = await client().chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'ping' }],
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    expect(completion.choices[0]!.message.content).toBe('[azure] ping');
    expect(last().path).toBe('/openai/deployments/gpt4o/chat/completions');
    expect(last().query.get('api-version')).toBe('2024-10-21');
    expect(last().headers['api-key']).toBe(fake.apiKey);
  });

  it('keeps content-filter verdicts out of strict answers', async () => {
    fake.enqueue({ fixture: 'azure-model-router' });
    const strict = await client({ strict_compat_compliance: true }).chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'Capital of Denmark?' }],
    });
    expectOpenAPIValid('CreateChatCompletionResponse', strict);
    expect(strict).not.toHaveProperty('prompt_filter_results');
    expect(strict.choices[0]).not.toHaveProperty('content_filter_results');
    const recorded = assembledAzureChatCompletion() as { choices: Array<{ message: { content: string } }> };
    expect(strict.choices[0]!.message.content).toBe(recorded.choices[0]!.message.content);
  });

  it('streams the recorded Azure stream, ending with usage', async () => {
    fake.enqueue({ fixture: 'azure-model-router' });
    const stream = await client().chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'Capital of Denmark?' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const { text, usage } = await readChatStream(stream);
    const recorded = assembledAzureChatCompletion() as { choices: Array<{ message: { content: string } }> };
    expect(text).toBe(recorded.choices[0]!.message.content);
    expect(usage).toMatchObject({ prompt_tokens: 15, completion_tokens: 78, total_tokens: 93 });
  });

  it('forces a named tool call', async () => {
    const completion = await client().chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools,
      tool_choice: { type: 'function', function: { name: 'weather' } },
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    const calls = completion.choices[0]!.message.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[];
    expect(calls.map((c) => c.function.name)).toEqual(['weather']);
    expect(JSON.parse(calls[0]!.function.arguments)).toEqual({ input: 'Weather in Paris?' });
    expect(completion.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('streams parallel tool calls', async () => {
    const stream = await client().chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'Plan my day in Paris' }],
      tools,
      tool_choice: 'required',
      stream: true,
    });
    const calls: Array<{ name: string; arguments: string }> = [];
    for await (const chunk of stream) {
      expectOpenAPIValid('CreateChatCompletionStreamResponse', chunk);
      for (const delta of chunk.choices[0]?.delta?.tool_calls ?? []) {
        calls[delta.index] ??= { name: '', arguments: '' };
        if (delta.function?.name) calls[delta.index]!.name = delta.function.name;
        calls[delta.index]!.arguments += delta.function?.arguments ?? '';
      }
    }
    expect(calls.map((c) => c.name)).toEqual(['weather', 'cityAttractions']);
    for (const call of calls) expect(JSON.parse(call.arguments)).toEqual({ input: 'Plan my day in Paris' });
  });

  it('answers with JSON following a schema, passing response_format on', async () => {
    fake.enqueue({ text: '{"city":"Copenhagen"}' });
    const response_format = {
      type: 'json_schema' as const,
      json_schema: {
        name: 'capital',
        schema: {
          type: 'object',
          properties: { city: { type: 'string' } },
          required: ['city'],
          additionalProperties: false,
        },
        strict: true,
      },
    };
    const completion = await client().chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'Capital of Denmark as JSON' }],
      response_format,
    });
    expect(JSON.parse(completion.choices[0]!.message.content!)).toEqual({ city: 'Copenhagen' });
    expect((last().body as { response_format: unknown }).response_format).toEqual(response_format);
  });

  it('passes image input on as it is', async () => {
    const content: OpenAI.ChatCompletionContentPart[] = [
      { type: 'text', text: 'What is in the picture?' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } },
    ];
    await client().chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content }] });
    expect((last().body as { messages: unknown[] }).messages).toEqual([{ role: 'user', content }]);
  });

  it('embeds through the embeddings deployment', async () => {
    const embedding = await client({ cloudd_deployment_name: 'embedding' }).embeddings.create({
      model: 'text-embedding-3-small',
      input: ['a', 'b'],
    });
    expectOpenAPIValid('CreateEmbeddingResponse', embedding);
    expect(embedding.data).toHaveLength(2);
    expect(last().path).toBe('/openai/deployments/embedding/embeddings');
  });

  it('routes by deployments[] alias, with the deployment’s own api_version', async () => {
    const deployments = [
      { deployment_id: 'gpt4o-mini', alias: 'gpt-4o-mini', api_version: '2024-06-01' },
      { deployment_id: 'gpt4o', alias: 'gpt-4o', api_version: '2024-10-21', is_default: true },
    ];
    const routed = client({ deployments, cloudd_deployment_name: undefined, cloudd_api_version: undefined });
    await routed.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(last().path).toBe('/openai/deployments/gpt4o-mini/chat/completions');
    expect(last().query.get('api-version')).toBe('2024-06-01');
  });

  it('caches the answers of two deployments apart, the same model name sent to each', async () => {
    const ask = async (config: Record<string, unknown>) => {
      const { data, response } = await client({ cache: { mode: 'simple' }, ...config })
        .chat.completions.create({
          model: 'gpt-4o',
          messages: [{ role: 'user', content: 'which deployment?' }],
        })
        .withResponse();
      return { status: response.headers.get('x-gateway-cache-status'), id: data.id, path: last().path };
    };
    const big = await ask({ cloudd_deployment_name: 'gpt4o' });
    expect(big).toMatchObject({ status: 'MISS', path: '/openai/deployments/gpt4o/chat/completions' });
    const small = await ask({ cloudd_deployment_name: 'gpt4o-mini' });
    expect(small).toMatchObject({ status: 'MISS', path: '/openai/deployments/gpt4o-mini/chat/completions' });
    const aliased = await ask({
      deployments: [{ deployment_id: 'embedding', alias: 'gpt-4o', api_version: '2024-10-21' }],
      cloudd_deployment_name: undefined,
      cloudd_api_version: undefined,
    });
    expect(aliased).toMatchObject({ status: 'MISS', path: '/openai/deployments/embedding/chat/completions' });
    expect(await ask({ cloudd_deployment_name: 'gpt4o-mini' })).toMatchObject({
      status: 'HIT',
      id: small.id,
    });
  });

  it('sends an Entra ID token given as `Bearer …` in Authorization', async () => {
    await client({ api_key: `Bearer ${fake.apiKey}` }).chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(last().headers.authorization).toBe(`Bearer ${fake.apiKey}`);
    expect(last().headers['api-key']).toBeUndefined();
  });

  it("returns Azure's content_filter refusal as a 400 with code content_filter", async () => {
    fake.enqueue({ status: 400 });
    const error = (await client()
      .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error.status).toBe(400);
    expect(error.code).toBe('content_filter');
  });

  it('refuses a target without an api version, naming the key', async () => {
    const error = (await client({ cloudd_api_version: undefined })
      .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(400);
    expect(error.param).toBe('cloudd_api_version');
  });
});

describe('Azure AI model inference through the gateway', () => {
  const aiClient = (config: Record<string, unknown> = {}) =>
    client({
      provider: 'azure-ai',
      cloudd_deployment_name: undefined,
      cloudd_api_version: undefined,
      cloudd_endpoint_name: 'my-llama',
      cloudd_region: 'eastus2',
      cloudd_deployment_type: 'serverless',
      ...config,
    });

  it('answers on a serverless endpoint with a bearer key and the default api-version', async () => {
    const completion = await aiClient().chat.completions.create({
      model: 'Llama-3.3-70B-Instruct',
      messages: [{ role: 'user', content: 'hello' }],
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    expect(completion.choices[0]!.message.content).toBe('[azure] hello');
    expect(last().path).toBe('/chat/completions');
    expect(last().query.get('api-version')).toBe('2024-05-01-preview');
    expect(last().headers.authorization).toBe(`Bearer ${fake.apiKey}`);
  });

  it('streams from a managed endpoint at /score, routed to its deployment', async () => {
    const stream = await aiClient({
      cloudd_deployment_type: 'managed',
      cloudd_deployment_name: 'blue',
    }).chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'hi there' }],
      stream: true,
    });
    const { text } = await readChatStream(stream);
    expect(text).toBe('[azure] hi there');
    expect(last().path).toBe('/score');
    expect(last().headers['azureml-model-deployment']).toBe('blue');
  });

  it('embeds on a serverless endpoint', async () => {
    const embedding = await aiClient().embeddings.create({ model: 'cohere-embed-v3', input: 'a' });
    expect(embedding.data).toHaveLength(1);
    expect(last().path).toBe('/embeddings');
  });

  // Mistral-family models answer tool calls without `type`, without `content`, and stream them without
  // `index` (recorded in provider-fixtures/mistral); the gateway repairs these into OpenAI's schema.
  const mistralFixture = (name: string) =>
    readFileSync(path.join(providerFixturesDir('mistral'), name), 'utf8');
  const mistralTools: OpenAI.ChatCompletionTool[] = [
    { type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: {} } } },
  ];

  it("repairs a Mistral model's tool call that lacks type and content", async () => {
    fake.enqueue({ json: JSON.parse(mistralFixture('mistral-tool-call.json')) });
    const completion = await aiClient().chat.completions.create({
      model: 'Mistral-Large-2411',
      messages: [{ role: 'user', content: 'Weather in San Francisco?' }],
      tools: mistralTools,
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    expect(completion.choices[0]!.message.content).toBeNull();
    expect(completion.choices[0]!.message.tool_calls).toEqual([
      {
        id: 'gSIMJiOkT',
        type: 'function',
        function: { name: 'weather', arguments: '{"location": "San Francisco"}' },
      },
    ]);
  });

  it("repairs a Mistral model's streamed tool call, so the SDK can assemble it", async () => {
    const events = mistralFixture('mistral-tool-call.chunks.txt')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as object);
    fake.enqueue({ events });
    const stream = aiClient().chat.completions.stream({
      model: 'Mistral-Large-2411',
      messages: [{ role: 'user', content: 'Weather in San Francisco?' }],
      tools: mistralTools,
    });
    for await (const chunk of stream) expectOpenAPIValid('CreateChatCompletionStreamResponse', chunk);
    const completion = await stream.finalChatCompletion();
    expect(completion.choices[0]!.message.tool_calls).toEqual([
      {
        id: 'gSIMJiOkT',
        type: 'function',
        function: { name: 'weather', arguments: '{"location": "San Francisco"}' },
      },
    ]);
  });

  it("keeps one circuit per deployment: a failing deployment's open circuit leaves another behind the same host alone", async () => {
    const cb = { cb_config: { failure_threshold: 1, cooldown_interval: 60_000 } };
    const ask = (deployment: string) =>
      client({ cloudd_deployment_name: deployment, ...cb }).chat.completions.create({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'circuit per deployment' }],
      });
    fake.enqueue({ status: 503 });
    await expect(ask('gpt4o')).rejects.toMatchObject({ status: 503 });
    // gpt4o's circuit is open now (one failure); gpt4o-mini, asked with the same model name, is not.
    await expect(ask('gpt4o')).rejects.toMatchObject({ status: 503, error: { code: 'circuit_open' } });
    const answer = await ask('gpt4o-mini');
    expect(answer.choices[0].message.content).toBeTruthy();
    expect(last().path).toBe('/openai/deployments/gpt4o-mini/chat/completions');
  });
});
