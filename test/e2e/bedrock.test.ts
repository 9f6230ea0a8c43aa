/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// The bedrock adapter end to end: the openai SDK → the gateway → a fake Bedrock Runtime that checks every
// SigV4 signature with the independent aws4 implementation and streams real binary event-stream frames
// replaying recorded ConverseStream answers.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseChunkLine } from '../fakes/bedrock/event-stream.js';
import { readBedrockJsonFixture, readBedrockStreamFixture } from '../fakes/bedrock/fixtures.js';
import { fakeEmbedding, startFakeBedrock, type FakeBedrock } from '../fakes/bedrock/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';
import { readChatStream } from '../helpers/chat-stream.js';

const MODEL = 'anthropic.claude-3-5-haiku-20241022-v1:0';
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

let gateway: TestGateway;
let fake: FakeBedrock;
let client: OpenAI;

function config(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    provider: 'bedrock',
    cloudc_region: 'eu-west-1',
    cloudc_access_key_id: 'AKIDE2E',
    cloudc_secret_access_key: 'e2e-secret',
    cloudc_session_token: 'e2e-session',
    custom_host: fake.url,
    ...extra,
  };
}

beforeAll(async () => {
  fake = await startFakeBedrock({
    accessKeyId: 'AKIDE2E',
    secretAccessKey: 'e2e-secret',
    sessionToken: 'e2e-session',
    region: 'eu-west-1',
  });
  gateway = await startGateway();
  client = gatewayOpenAI(gateway, config());
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

const lastRequest = () =>
  fake.requests.at(-1)! as { body: any; headers: Record<string, string>; [key: string]: any };
const asFloat32 = (vector: number[]) => Array.from(new Float32Array(vector));

function streamTruth(name: string) {
  const events = readBedrockStreamFixture(name).map(parseChunkLine);
  const text = events
    .flatMap((e) =>
      e.eventType === 'contentBlockDelta' && typeof (e.payload as any).delta.text === 'string'
        ? [(e.payload as any).delta.text]
        : [],
    )
    .join('');
  const usage = events.find((e) => e.eventType === 'metadata')?.payload.usage as any;
  return { text, usage, events };
}

describe('bedrock through the gateway', () => {
  it('answers a plain question (alias cloudc)', async () => {
    const recorded = readBedrockJsonFixture('amazon-bedrock-text.json') as any;
    const alias = gatewayOpenAI(gateway, config({ provider: 'cloudc' }));
    const completion = await alias.chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'system', content: 'Answer precisely.' },
        { role: 'user', content: 'How many r are in strawberry?' },
      ],
      max_tokens: 300,
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    expect(completion.choices[0].message.content).toBe(recorded.output.message.content[0].text);
    expect(completion.usage).toMatchObject({
      prompt_tokens: recorded.usage.inputTokens,
      completion_tokens: recorded.usage.outputTokens,
    });
    const sent = lastRequest();
    expect(sent.action).toBe('converse');
    expect(sent.modelId).toBe(MODEL);
    expect(sent.path).toBe(`/model/${encodeURIComponent(MODEL)}/converse`);
    expect(sent.body).toEqual({
      messages: [{ role: 'user', content: [{ text: 'How many r are in strawberry?' }] }],
      system: [{ text: 'Answer precisely.' }],
      inferenceConfig: { maxTokens: 300 },
    });
  });

  it('streams an answer from binary event-stream frames, usage last', async () => {
    const truth = streamTruth('amazon-bedrock-text.chunks.txt');
    fake.enqueue({ kind: 'stream', fixture: 'amazon-bedrock-text.chunks.txt' });
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'How many r are in strawberry?' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const { text, chunks } = await readChatStream(stream);
    expect(text).toBe(truth.text);
    expect(chunks.at(-1)!.choices).toEqual([]);
    expect(chunks.at(-1)!.usage).toMatchObject({
      prompt_tokens: truth.usage.inputTokens,
      completion_tokens: truth.usage.outputTokens,
    });
    expect(lastRequest().action).toBe('converse-stream');
  });

  it('forces a tool call', async () => {
    const recorded = readBedrockJsonFixture('amazon-bedrock-tool-call.1.json') as any;
    const toolUse = recorded.output.message.content.find((b: any) => b.toolUse).toolUse;
    fake.enqueue({ kind: 'json', fixture: 'amazon-bedrock-tool-call.1.json' });
    const completion = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Call the tool' }],
      tools: [
        {
          type: 'function',
          function: {
            name: toolUse.name,
            parameters: { type: 'object', properties: { value: { type: 'string' } } },
          },
        },
      ],
      tool_choice: { type: 'function', function: { name: toolUse.name } },
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    expect(completion.choices[0].finish_reason).toBe('tool_calls');
    expect(completion.choices[0].message.tool_calls).toEqual([
      {
        id: toolUse.toolUseId,
        type: 'function',
        function: { name: toolUse.name, arguments: JSON.stringify(toolUse.input) },
      },
    ]);
    expect(lastRequest().body.toolConfig.toolChoice).toEqual({ tool: { name: toolUse.name } });
  });

  it('streams parallel tool calls', async () => {
    const fixture = 'amazon-bedrock-json-tool-text-then-weather-then-json.1.chunks.txt';
    const truth = streamTruth(fixture);
    const expectedCalls = truth.events
      .filter((e) => e.eventType === 'contentBlockStart')
      .map((e) => {
        const start = (e.payload as any).start.toolUse;
        const input = truth.events
          .filter(
            (d) =>
              d.eventType === 'contentBlockDelta' &&
              (d.payload as any).contentBlockIndex === (e.payload as any).contentBlockIndex,
          )
          .map((d) => (d.payload as any).delta.toolUse.input)
          .join('');
        return { id: start.toolUseId, name: start.name, arguments: input };
      });
    fake.enqueue({ kind: 'stream', fixture });
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'What is 2+2, and the weather in SF and London?' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'weather',
            parameters: { type: 'object', properties: { location: { type: 'string' } } },
          },
        },
      ],
      stream: true,
    });
    const calls: Array<{ id: string; name: string; arguments: string }> = [];
    let text = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      expectOpenAPIValid('CreateChatCompletionStreamResponse', chunk);
      text += chunk.choices[0]?.delta.content ?? '';
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        if (call.id) calls[call.index] = { id: call.id, name: call.function?.name ?? '', arguments: '' };
        calls[call.index].arguments += call.function?.arguments ?? '';
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(expectedCalls).toHaveLength(2);
    expect(calls).toEqual(expectedCalls);
    expect(text).toBe(truth.text);
    expect(finish).toBe('tool_calls');
  });

  it('answers with JSON following a schema (outputConfig.textFormat)', async () => {
    const answer = { name: 'John', age: 42 };
    fake.enqueue({
      kind: 'json',
      body: {
        output: { message: { role: 'assistant', content: [{ text: JSON.stringify(answer) }] } },
        stopReason: 'end_turn',
        usage: { inputTokens: 30, outputTokens: 12, totalTokens: 42 },
      },
    });
    const schema = {
      type: 'object',
      properties: { name: { type: 'string' }, age: { type: 'integer' } },
      required: ['name', 'age'],
      additionalProperties: false,
    };
    const completion = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'John is 42.' }],
      response_format: { type: 'json_schema', json_schema: { name: 'person', schema } },
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    expect(JSON.parse(completion.choices[0].message.content ?? '')).toEqual(answer);
    expect(lastRequest().body.outputConfig).toEqual({
      textFormat: {
        type: 'json_schema',
        structure: { jsonSchema: { schema: JSON.stringify(schema), name: 'person' } },
      },
    });
  });

  it('answers json_object with the json tool input alone, not the text the model wrote beside it', async () => {
    const recorded = readBedrockJsonFixture('amazon-bedrock-json-tool-with-answer.1.json') as any;
    const input = recorded.output.message.content.find((b: any) => b.toolUse).toolUse.input;
    fake.enqueue({ kind: 'json', fixture: 'amazon-bedrock-json-tool-with-answer.1.json' });
    const completion = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'John Doe, as JSON.' }],
      response_format: { type: 'json_object' },
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    expect(JSON.parse(completion.choices[0].message.content ?? '')).toEqual(input);
    expect(completion.choices[0].finish_reason).toBe('stop');

    fake.enqueue({ kind: 'stream', fixture: 'amazon-bedrock-json-only-text-first.1.chunks.txt' });
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'John, as JSON.' }],
      response_format: { type: 'json_object' },
      stream: true,
    });
    const { text, finish } = await readChatStream(stream);
    expect(JSON.parse(text)).toEqual({ name: 'John' });
    expect(finish).toBe('stop');
  });

  it('fails an answer Bedrock ended with malformed_tool_use and nothing in it, as OpenAI fails invalid model output', async () => {
    // The recorded tool call, as Bedrock answers when the call the model wrote does not parse.
    const recorded = readBedrockJsonFixture('amazon-bedrock-tool-call.1.json') as any;
    fake.enqueue({
      kind: 'json',
      body: {
        ...recorded,
        output: { message: { role: 'assistant', content: [] } },
        stopReason: 'malformed_tool_use',
      },
    });
    const ask = {
      model: MODEL,
      messages: [{ role: 'user' as const, content: 'List the files.' }],
      tools: [
        {
          type: 'function' as const,
          function: { name: 'bash', parameters: { type: 'object', properties: {} } },
        },
      ],
    };
    const error = await client.chat.completions.create(ask).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as Error).message).toContain('malformed_tool_use');

    const fixture = 'amazon-bedrock-tool-call.1.chunks.txt';
    const lines = readBedrockStreamFixture(fixture)
      .filter((line) => !line.includes('contentBlock'))
      .map((line) => line.replace('"stopReason":"tool_use"', '"stopReason":"malformed_tool_use"'));
    fake.enqueue({ kind: 'stream', fixture, lines });
    const streamed = await (async () => {
      const stream = await client.chat.completions.create({ ...ask, stream: true });
      for await (const chunk of stream) expect(chunk.choices[0]?.finish_reason ?? null).toBeNull();
    })().catch((e: unknown) => e);
    expect(streamed).toBeInstanceOf(OpenAI.APIError);
    expect((streamed as Error).message).toContain('malformed_tool_use');
  });

  it('thinks on an application inference profile, whose ARN does not name its model', async () => {
    const profile = 'arn:aws:bedrock:eu-west-1:123456789012:application-inference-profile/a1b2c3d4e5f6';
    const recorded = readBedrockJsonFixture('amazon-bedrock-reasoning.json') as any;
    fake.enqueue({ kind: 'json', fixture: 'amazon-bedrock-reasoning.json' });
    const thinker = gatewayOpenAI(gateway, config({ strict_compat_compliance: false }));
    const completion = await thinker.chat.completions.create({
      model: profile,
      messages: [{ role: 'user', content: 'How many r in strawberry?' }],
      thinking: { type: 'enabled', budget_tokens: 1024 },
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    expect(completion.choices[0].message.content).toBe(
      recorded.output.message.content.find((b: any) => typeof b.text === 'string').text,
    );
    expect(lastRequest().modelId).toBe(profile);
    expect(lastRequest().body.additionalModelRequestFields).toEqual({
      thinking: { type: 'enabled', budget_tokens: 1024 },
    });
  });

  it('offers tools to a model that takes no toolChoice (Llama) when the client left tool_choice out or chose auto', async () => {
    const recorded = readBedrockJsonFixture('amazon-bedrock-tool-call.1.json') as any;
    const bash = {
      type: 'function' as const,
      function: { name: 'bash', parameters: { type: 'object', properties: { command: { type: 'string' } } } },
    };
    for (const choice of [undefined, 'auto' as const]) {
      fake.enqueue({ kind: 'json', fixture: 'amazon-bedrock-tool-call.1.json' });
      const completion = await client.chat.completions.create({
        model: 'us.meta.llama3-3-70b-instruct-v1:0',
        messages: [{ role: 'user', content: 'List the files.' }],
        tools: [bash],
        ...(choice ? { tool_choice: choice } : {}),
      });
      const call = completion.choices[0].message.tool_calls?.[0];
      expect(call?.type === 'function' && JSON.parse(call.function.arguments)).toEqual(
        recorded.output.message.content[0].toolUse.input,
      );
      expect(lastRequest().body.toolConfig.toolChoice).toBeUndefined();
    }
  });

  it('leaves out text that is only whitespace, which Bedrock refuses and OpenAI takes', async () => {
    fake.enqueue({ kind: 'json', fixture: 'amazon-bedrock-text.json' });
    const completion = await client.chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'user', content: 'List the files.' },
        {
          role: 'assistant',
          content: '\n\n',
          tool_calls: [
            { id: 'tooluse_1', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'tooluse_1', content: '' },
        {
          role: 'user',
          content: [
            { type: 'text', text: ' ' },
            { type: 'text', text: 'How many are there?' },
          ],
        },
      ],
      tools: [
        { type: 'function', function: { name: 'bash', parameters: { type: 'object', properties: {} } } },
      ],
    });
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(lastRequest().body.messages).toEqual([
      { role: 'user', content: [{ text: 'List the files.' }] },
      {
        role: 'assistant',
        content: [{ toolUse: { toolUseId: 'tooluse_1', name: 'bash', input: { command: 'ls' } } }],
      },
      {
        role: 'user',
        content: [
          { toolResult: { toolUseId: 'tooluse_1', content: [{ text: '' }] } },
          { text: 'How many are there?' },
        ],
      },
    ]);
  });

  it('sends an image as bytes and refuses an image URL naming the part', async () => {
    const completion = await client.chat.completions.create({
      model: MODEL,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Describe' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          ],
        },
      ],
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    expect(lastRequest().body.messages[0].content).toEqual([
      { text: 'Describe' },
      { image: { format: 'png', source: { bytes: PNG } } },
    ]);

    const count = fake.requests.length;
    const error = await client.chat.completions
      .create({
        model: MODEL,
        messages: [
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] },
        ],
      })
      .catch((e) => e);
    expect(error.status).toBe(400);
    expect(error.error?.param ?? error.param).toBe('messages[0].content[0].image_url');
    expect(fake.requests.length).toBe(count);
  });

  it('embeds with Titan (one input) and Cohere (several)', async () => {
    const titan = await client.embeddings.create({
      model: 'amazon.titan-embed-text-v2:0',
      input: 'hello world',
    });
    expectOpenAPIValid('CreateEmbeddingResponse', titan);
    // the SDK asks for base64 (float32) and decodes it, so the expected vectors go through float32 too
    expect(titan.data[0].embedding).toEqual(asFloat32(fakeEmbedding('hello world')));
    expect(titan.usage.prompt_tokens).toBe(2);
    expect(lastRequest().body).toEqual({ inputText: 'hello world' });

    const cohere = await client.embeddings.create({
      model: 'cohere.embed-english-v3',
      input: ['alpha', 'beta gamma'],
    });
    expectOpenAPIValid('CreateEmbeddingResponse', cohere);
    expect(cohere.data.map((d) => d.embedding)).toEqual([
      asFloat32(fakeEmbedding('alpha')),
      asFloat32(fakeEmbedding('beta gamma')),
    ]);
    expect(lastRequest().body).toEqual({ texts: ['alpha', 'beta gamma'], input_type: 'search_document' });
  });

  it('embeds a list with Titan one text a call, and more than 96 texts with Cohere in calls of 96', async () => {
    const before = fake.requests.length;
    const titan = await client.embeddings.create({
      model: 'amazon.titan-embed-text-v2:0',
      input: ['alpha', 'beta gamma', 'delta'],
      encoding_format: 'float',
    });
    expect(titan.data.map((d) => d.index)).toEqual([0, 1, 2]);
    expect(titan.data.map((d) => d.embedding)).toEqual(
      ['alpha', 'beta gamma', 'delta'].map((text) => fakeEmbedding(text)),
    );
    expect(titan.usage.prompt_tokens).toBe(4);
    const titanCalls = fake.requests.slice(before).map((r) => r.body);
    expect(titanCalls.map((body) => body.inputText).sort()).toEqual(['alpha', 'beta gamma', 'delta']);

    const input = Array.from({ length: 100 }, (_, i) => `text ${i}`);
    const middle = fake.requests.length;
    const cohere = await client.embeddings.create({
      model: 'cohere.embed-english-v3',
      input,
      encoding_format: 'float',
    });
    expect(cohere.data.map((d) => d.embedding)).toEqual(input.map((text) => fakeEmbedding(text)));
    const sizes = fake.requests.slice(middle).map((r) => (r.body.texts as string[]).length);
    expect(sizes.sort((a, b) => b - a)).toEqual([96, 4]);
  });

  it("returns Bedrock's 403 for a wrong secret and 400 for a bad region", async () => {
    const wrong = gatewayOpenAI(gateway, config({ cloudc_secret_access_key: 'not-the-secret' }));
    const denied = await wrong.chat.completions
      .create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(denied.status).toBe(403);
    expect(String(denied.message)).toMatch(/signature we calculated does not match/);

    const badRegion = gatewayOpenAI(gateway, config({ cloudc_region: 'not a region' }));
    const refused = await badRegion.chat.completions
      .create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(refused.status).toBe(400);
    expect(String(refused.message)).toContain('cloudc_region');
  });

  it('fails a stream that throws throttlingException', async () => {
    fake.enqueue({
      kind: 'stream',
      fixture: 'amazon-bedrock-text.chunks.txt',
      exception: { type: 'throttlingException', message: 'Too many requests', afterEvents: 0 },
    });
    const outcome = await (async () => {
      const stream = await client.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: 'x' }],
        stream: true,
      });
      for await (const chunk of stream) void chunk;
    })().catch((e) => e);
    expect(outcome).toBeInstanceOf(Error);
    expect(String(outcome.message)).toMatch(/Too many requests/);
  });
});
