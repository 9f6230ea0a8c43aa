// Cohere through the gateway, spoken to with the openai SDK, against the fake Cohere v2 API.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCohereJson } from '../fakes/cohere/fixtures.js';
import { startFakeCohere, type FakeCohere } from '../fakes/cohere/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';
import { readChatStream } from '../helpers/chat-stream.js';

let gateway: TestGateway;
let fake: FakeCohere;

beforeAll(async () => {
  fake = await startFakeCohere();
  gateway = await startGateway();
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

function client(config: Record<string, unknown> = {}): OpenAI {
  return gatewayOpenAI(gateway, {
    provider: 'cohere',
    api_key: fake.apiKey,
    custom_host: fake.url,
    ...config,
  });
}

const lastBody = () => fake.requests.at(-1)!.body as Record<string, unknown>;

describe('Cohere through the gateway', () => {
  it('answers a plain chat completion', async () => {
    fake.enqueue({ fixture: 'cohere-text' });
    const completion = await client().chat.completions.create({
      model: 'command-a-03-2025',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'What is the capital of France?' },
      ],
      max_tokens: 20,
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    expect(completion.choices[0]!.message.content).toBe('The capital of France is Paris.');
    expect(completion.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 });
    expect(fake.requests.at(-1)!.path).toBe('/v2/chat');
    expect(fake.requests.at(-1)!.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
    expect(lastBody()).toMatchObject({ model: 'command-a-03-2025', max_tokens: 20 });
  });

  it('streams an answer ending with usage', async () => {
    fake.enqueue({ fixture: 'cohere-text' });
    const stream = await client().chat.completions.create({
      model: 'command-a-03-2025',
      messages: [{ role: 'user', content: 'What is the capital of France?' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const { text, usage, finish } = await readChatStream(stream);
    expect(text).toBe('The capital of France is Paris.');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 7 });
  });

  it('forces a named tool call', async () => {
    fake.enqueue({ fixture: 'cohere-null-args' });
    const completion = await client().chat.completions.create({
      model: 'command-a-03-2025',
      messages: [{ role: 'user', content: 'What time is it?' }],
      tools: [
        { type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: {} } } },
        {
          type: 'function',
          function: { name: 'currentTime', parameters: { type: 'object', properties: {} } },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'currentTime' } },
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    const call = completion.choices[0]!.message
      .tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(call.function).toEqual({ name: 'currentTime', arguments: '{}' });
    expect(completion.choices[0]!.finish_reason).toBe('tool_calls');
    const body = lastBody() as { tools: Array<{ function: { name: string } }>; tool_choice: string };
    expect(body.tools.map((t) => t.function.name)).toEqual(['currentTime']);
    expect(body.tool_choice).toBe('REQUIRED');
  });

  it('streams parallel tool calls', async () => {
    fake.enqueue({ fixture: 'cohere-tool-call' });
    const stream = await client().chat.completions.create({
      model: 'command-a-03-2025',
      messages: [{ role: 'user', content: 'Weather and attractions in San Francisco?' }],
      tools: [
        { type: 'function', function: { name: 'weather', parameters: { type: 'object' } } },
        { type: 'function', function: { name: 'cityAttractions', parameters: { type: 'object' } } },
      ],
      stream: true,
    });
    const calls: Array<{ id: string; name: string; arguments: string }> = [];
    for await (const chunk of stream) {
      expectOpenAPIValid('CreateChatCompletionStreamResponse', chunk);
      for (const delta of chunk.choices[0]?.delta?.tool_calls ?? []) {
        calls[delta.index] ??= { id: '', name: '', arguments: '' };
        if (delta.id) calls[delta.index]!.id = delta.id;
        if (delta.function?.name) calls[delta.index]!.name = delta.function.name;
        calls[delta.index]!.arguments += delta.function?.arguments ?? '';
      }
    }
    expect(calls).toEqual([
      { id: 'weather_e8p4pn45zt0t', name: 'weather', arguments: '{"location": "San Francisco"}' },
      { id: 'cityAttractions_pyxssbwnq9fq', name: 'cityAttractions', arguments: '{"city": "San Francisco"}' },
    ]);
  });

  it('answers with JSON following a schema', async () => {
    const sample = readCohereJson('cohere-text') as { message: { content: Array<{ text: string }> } };
    sample.message.content[0]!.text = '{"city":"Paris"}';
    fake.enqueue({ json: sample });
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    };
    const completion = await client().chat.completions.create({
      model: 'command-a-03-2025',
      messages: [{ role: 'user', content: 'Capital of France as JSON' }],
      response_format: { type: 'json_schema', json_schema: { name: 'capital', schema, strict: true } },
    });
    expect(JSON.parse(completion.choices[0]!.message.content!)).toEqual({ city: 'Paris' });
    expect(lastBody().response_format).toEqual({ type: 'json_object', json_schema: schema });
  });

  it('sends image input as Cohere image_url content', async () => {
    fake.enqueue({ fixture: 'cohere-text' });
    const dataUrl =
      'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    await client().chat.completions.create({
      model: 'command-a-vision-07-2025',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Describe both.' },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
            { type: 'image_url', image_url: { url: dataUrl, detail: 'high' } },
          ],
        },
      ],
    });
    expect((lastBody().messages as unknown[])[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'Describe both.' },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
        { type: 'image_url', image_url: { url: dataUrl, detail: 'high' } },
      ],
    });
  });

  it('embeds, in floats and in the base64 the SDK asks for by default', async () => {
    const sample = readCohereJson('cohere-embedding') as { embeddings: { float: number[][] } };
    const floats = await client().embeddings.create({
      model: 'embed-v4.0',
      input: ['sunny day at the beach', 'rainy day in the city'],
      encoding_format: 'float',
    });
    expectOpenAPIValid('CreateEmbeddingResponse', floats);
    expect(floats.data.map((d) => d.embedding)).toEqual(sample.embeddings.float);
    expect(lastBody()).toMatchObject({ input_type: 'search_document', embedding_types: ['float'] });

    const decoded = await client().embeddings.create({
      model: 'embed-v4.0',
      input: 'sunny day at the beach',
    });
    expect(decoded.data).toHaveLength(1);
    decoded.data[0]!.embedding.forEach((value, i) =>
      expect(value).toBeCloseTo(sample.embeddings.float[0]![i]!, 6),
    );
  });

  it('embeds more texts than a Cohere call takes (96) in calls of 96, in input order', async () => {
    const before = fake.requests.length;
    const input = Array.from({ length: 200 }, (_, i) => `text number ${i}`);
    const response = await client().embeddings.create({
      model: 'embed-v4.0',
      input,
      encoding_format: 'float',
    });
    expectOpenAPIValid('CreateEmbeddingResponse', response);
    expect(response.data.map((d) => d.index)).toEqual(input.map((_, i) => i));
    const calls = fake.requests.slice(before).map((r) => (r.body as { texts: string[] }).texts);
    expect(calls.map((texts) => texts.length).sort((a, b) => b - a)).toEqual([96, 96, 8]);
    expect(calls.flat().sort()).toEqual([...input].sort());
    expect(response.usage.prompt_tokens).toBe(600);
  });

  it('fans n out into n Cohere calls merged into n choices', async () => {
    fake.enqueue({ fixture: 'cohere-text' }, { fixture: 'cohere-max-tokens' });
    const before = fake.requests.length;
    const completion = await client().chat.completions.create({
      model: 'command-a-03-2025',
      messages: [{ role: 'user', content: 'Tell me about France' }],
      n: 2,
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    expect(fake.requests.length - before).toBe(2);
    for (const request of fake.requests.slice(before)) expect(request.body).not.toHaveProperty('n');
    expect(completion.choices.map((c) => c.index)).toEqual([0, 1]);
    expect(completion.choices.map((c) => c.message.content).sort()).toEqual(
      ['**The History of', 'The capital of France is Paris.'].sort(),
    );
  });

  it('fans a streamed n out into one stream with a choice per call and summed usage', async () => {
    fake.enqueue({ fixture: 'cohere-text' }, { fixture: 'cohere-text' });
    const before = fake.requests.length;
    const stream = await client().chat.completions.create({
      model: 'command-a-03-2025',
      messages: [{ role: 'user', content: 'What is the capital of France?' }],
      n: 2,
      stream: true,
      stream_options: { include_usage: true },
    });
    const text = new Map<number, string>();
    const finish = new Map<number, string>();
    const ids = new Set<string>();
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      expectOpenAPIValid('CreateChatCompletionStreamResponse', chunk);
      ids.add(chunk.id);
      for (const choice of chunk.choices) {
        text.set(choice.index, (text.get(choice.index) ?? '') + (choice.delta?.content ?? ''));
        if (choice.finish_reason) finish.set(choice.index, choice.finish_reason);
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(fake.requests.length - before).toBe(2);
    expect(ids.size).toBe(1);
    expect([...text.entries()].sort()).toEqual([
      [0, 'The capital of France is Paris.'],
      [1, 'The capital of France is Paris.'],
    ]);
    expect([...finish.values()]).toEqual(['stop', 'stop']);
    expect(usage).toMatchObject({ prompt_tokens: 24, completion_tokens: 14 });
  });

  it("returns Cohere's refusal of a wrong key as a 401", async () => {
    const error = await client({ api_key: 'wrong' })
      .chat.completions.create({ model: 'command-a-03-2025', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(401);
  });

  it('refuses logit_bias with a 400 naming it', async () => {
    const error = await client()
      .chat.completions.create({
        model: 'command-a-03-2025',
        messages: [{ role: 'user', content: 'hi' }],
        logit_bias: { '1': 5 },
      })
      .catch((e: unknown) => e);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect((error as InstanceType<typeof OpenAI.APIError>).param).toBe('logit_bias');
  });
});
