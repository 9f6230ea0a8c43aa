/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// The anthropic adapter end to end: the openai SDK → the gateway → a fake Anthropic Messages API replaying
// recorded answers. Each answer is checked against the recording and the OpenAI OpenAPI document, and each
// translated request against what Anthropic expects.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAnthropicJsonFixture, readAnthropicStreamFixture } from '../fakes/anthropic/fixtures.js';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';
import { readChatStream } from '../helpers/chat-stream.js';

const API_KEY = 'sk-ant-e2e';
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

let gateway: TestGateway;
let fake: FakeAnthropic;
let client: OpenAI;

beforeAll(async () => {
  fake = await startFakeAnthropic({ apiKey: API_KEY });
  gateway = await startGateway();
  client = gatewayOpenAI(gateway, { provider: 'anthropic', api_key: API_KEY, custom_host: fake.url });
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

const lastRequest = () =>
  fake.requests.at(-1)! as { body: any; headers: Record<string, string>; [key: string]: any };

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

describe('anthropic through the gateway', () => {
  it('answers a plain question', async () => {
    const recorded = readAnthropicJsonFixture('anthropic-text.json') as any;
    const completion = await client.chat.completions.create({
      model: 'claude-sonnet-4-5',
      messages: [
        { role: 'system', content: 'You are friendly.' },
        { role: 'user', content: 'Hello, how are you?' },
      ],
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    expect(completion.choices[0].message.content).toBe(recorded.content[0].text);
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(completion.usage?.prompt_tokens).toBe(recorded.usage.input_tokens);
    expect(completion.usage?.completion_tokens).toBe(recorded.usage.output_tokens);

    const sent = lastRequest();
    expect(sent.headers['x-api-key']).toBe(API_KEY);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.body).toMatchObject({
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      system: [{ type: 'text', text: 'You are friendly.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello, how are you?' }] }],
    });
  });

  it('streams an answer with usage last', async () => {
    const lines = readAnthropicStreamFixture('anthropic-text.chunks.txt').map((l) => JSON.parse(l));
    const expectedText = lines
      .filter((e) => e.type === 'content_block_delta')
      .map((e) => e.delta.text)
      .join('');
    const finalUsage = lines.find((e) => e.type === 'message_delta').usage;
    fake.enqueue({ kind: 'stream', fixture: 'anthropic-text.chunks.txt' });
    const stream = await client.chat.completions.create({
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'user', content: 'Hello' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const { text, chunks } = await readChatStream(stream);
    expect(text).toBe(expectedText);
    expect(chunks.filter((c) => c.choices[0]?.finish_reason).map((c) => c.choices[0].finish_reason)).toEqual([
      'stop',
    ]);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({
      prompt_tokens: finalUsage.input_tokens,
      completion_tokens: finalUsage.output_tokens,
    });
    expect(lastRequest().body.stream).toBe(true);
  });

  it('forces a tool call', async () => {
    const recorded = readAnthropicJsonFixture('anthropic-tool-no-args.json') as any;
    const toolUse = recorded.content.find((b: any) => b.type === 'tool_use');
    fake.enqueue({ kind: 'json', fixture: 'anthropic-tool-no-args.json' });
    const completion = await client.chat.completions.create({
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'user', content: 'Update the issue list' }],
      tools: [
        {
          type: 'function',
          function: { name: 'updateIssueList', parameters: { type: 'object', properties: {} } },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'updateIssueList' } },
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    expect(completion.choices[0].finish_reason).toBe('tool_calls');
    expect(completion.choices[0].message.tool_calls).toEqual([
      {
        id: toolUse.id,
        type: 'function',
        function: { name: 'updateIssueList', arguments: JSON.stringify(toolUse.input) },
      },
    ]);
    expect(lastRequest().body.tool_choice).toEqual({ type: 'tool', name: 'updateIssueList' });
  });

  it('streams parallel tool calls with indexes, ids once and arguments that concatenate to JSON', async () => {
    // Two tool_use blocks in Anthropic's recorded wire format (message_start and usage from a recording).
    const recorded = readAnthropicStreamFixture('anthropic-tool-no-args.chunks.txt').map((l) =>
      JSON.parse(l),
    );
    const events = [
      recorded[0],
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Checking both.' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 'toolu_paris', name: 'get_weather', input: {} },
      },
      {
        type: 'content_block_delta',
        index: 1,
        delta: { type: 'input_json_delta', partial_json: '{"city":' },
      },
      {
        type: 'content_block_delta',
        index: 1,
        delta: { type: 'input_json_delta', partial_json: '"Paris"}' },
      },
      { type: 'content_block_stop', index: 1 },
      {
        type: 'content_block_start',
        index: 2,
        content_block: { type: 'tool_use', id: 'toolu_rome', name: 'get_weather', input: {} },
      },
      {
        type: 'content_block_delta',
        index: 2,
        delta: { type: 'input_json_delta', partial_json: '{"city":"Ro' },
      },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: 'me"}' } },
      { type: 'content_block_stop', index: 2 },
      recorded.find((e) => e.type === 'message_delta'),
      { type: 'message_stop' },
    ];
    fake.enqueue({ kind: 'stream', events });
    const stream = await client.chat.completions.create({
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'user', content: 'Weather in Paris and Rome?' }],
      tools: [weatherTool],
      stream: true,
    });
    const calls: Array<{ id: string; name: string; arguments: string }> = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      expectOpenAPIValid('CreateChatCompletionStreamResponse', chunk);
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        if (call.id) calls[call.index] = { id: call.id, name: call.function?.name ?? '', arguments: '' };
        calls[call.index].arguments += call.function?.arguments ?? '';
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(calls).toEqual([
      { id: 'toolu_paris', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { id: 'toolu_rome', name: 'get_weather', arguments: '{"city":"Rome"}' },
    ]);
    expect(finish).toBe('tool_calls');
  });

  it('answers with JSON following a schema', async () => {
    const recorded = readAnthropicJsonFixture('anthropic-json-output-format.1.json') as any;
    fake.enqueue({ kind: 'json', fixture: 'anthropic-json-output-format.1.json' });
    const schema = {
      type: 'object',
      properties: { recipe: { type: 'object' } },
      required: ['recipe'],
      additionalProperties: false,
    };
    const completion = await client.chat.completions.create({
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'user', content: 'A lasagna recipe' }],
      response_format: { type: 'json_schema', json_schema: { name: 'recipe', schema } },
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    expect(JSON.parse(completion.choices[0].message.content ?? '')).toEqual(
      JSON.parse(recorded.content[0].text),
    );
    expect(lastRequest().body.output_config).toEqual({ format: { type: 'json_schema', schema } });
  });

  it('sends an image and passes anthropic-beta on', async () => {
    const beta = gatewayOpenAI(
      gateway,
      { provider: 'anthropic', api_key: API_KEY, custom_host: fake.url },
      { 'anthropic-beta': 'files-api-2025-04-14' },
    );
    const completion = await beta.chat.completions.create({
      model: 'claude-sonnet-4-5',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
          ],
        },
      ],
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    const sent = lastRequest();
    expect(sent.headers['anthropic-beta']).toBe('files-api-2025-04-14');
    expect(sent.body.messages[0].content).toEqual([
      { type: 'text', text: 'What is in this picture?' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
    ]);
  });

  it('refuses embeddings with a clear 400', async () => {
    const error = await client.embeddings.create({ model: 'claude-sonnet-4-5', input: 'hi' }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error.status).toBe(400);
    expect(String(error.message)).toMatch(/anthropic/i);
  });

  // Anthropic refuses a fifth prompt-caching breakpoint; the gateway does first, in the OpenAI shape, naming
  // the chat field, and sends nothing.
  it('refuses a fifth cache_control breakpoint with a 400 naming it, calling no provider', async () => {
    const calls = fake.requests.length;
    const cache = { type: 'ephemeral' };
    const error = await client.chat.completions
      .create({
        model: 'claude-sonnet-4-5',
        messages: [
          { role: 'system', content: 'Rules.', cache_control: cache },
          {
            role: 'user',
            content: ['One.', 'Two.', 'Three.', 'Four.'].map((text) => ({
              type: 'text' as const,
              text,
              cache_control: cache,
            })),
          },
        ],
      } as any)
      .catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.error).toMatchObject({
      type: 'invalid_request_error',
      param: 'messages[1].content[3].cache_control',
    });
    expect(fake.requests.length).toBe(calls);
  });

  it("returns Anthropic's 401 for a wrong key", async () => {
    const wrong = gatewayOpenAI(gateway, {
      provider: 'anthropic',
      api_key: 'sk-ant-wrong',
      custom_host: fake.url,
    });
    const error = await wrong.chat.completions
      .create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error.status).toBe(401);
    expect(String(error.message)).toContain('invalid x-api-key');
  });

  it('fails a stream whose first event is an overloaded error', async () => {
    fake.enqueue({
      kind: 'stream',
      fixture: 'anthropic-text.chunks.txt',
      error: { type: 'overloaded_error', message: 'Overloaded', afterEvents: 0 },
    });
    const outcome = await (async () => {
      const stream = await client.chat.completions.create({
        model: 'claude-sonnet-4-5',
        messages: [{ role: 'user', content: 'x' }],
        stream: true,
      });
      for await (const chunk of stream) void chunk;
    })().catch((e) => e);
    expect(outcome).toBeInstanceOf(Error);
    expect(String(outcome.message)).toMatch(/Overloaded/);
  });

  it('answers json_object with the json tool input alone, not the text Claude wrote before it', async () => {
    const message = (content: unknown[]) => ({
      id: 'msg_json_text',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content,
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 20, output_tokens: 12 },
    });
    const tool = { type: 'tool_use', id: 'toolu_01', name: 'json', input: { name: 'John', age: 30 } };
    fake.enqueue({ kind: 'json', body: message([{ type: 'text', text: 'Here is the JSON:' }, tool]) });
    const completion = await client.chat.completions.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'John, 30, as JSON.' }],
      response_format: { type: 'json_object' },
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    expect(JSON.parse(completion.choices[0].message.content ?? '')).toEqual({ name: 'John', age: 30 });
    expect(completion.choices[0].finish_reason).toBe('stop');

    const start = message([]);
    fake.enqueue({
      kind: 'stream',
      events: [
        { type: 'message_start', message: { ...start, stop_reason: null } },
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Here is the JSON:' } },
        { type: 'content_block_stop', index: 0 },
        { type: 'content_block_start', index: 1, content_block: { ...tool, input: {} } },
        {
          type: 'content_block_delta',
          index: 1,
          delta: { type: 'input_json_delta', partial_json: '{"name": "John", "age": 30}' },
        },
        { type: 'content_block_stop', index: 1 },
        {
          type: 'message_delta',
          delta: { stop_reason: 'tool_use', stop_sequence: null },
          usage: { output_tokens: 12 },
        },
        { type: 'message_stop' },
      ],
    });
    const stream = await client.chat.completions.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'John, 30, as JSON.' }],
      response_format: { type: 'json_object' },
      stream: true,
    });
    const { text } = await readChatStream(stream);
    expect(JSON.parse(text)).toEqual({ name: 'John', age: 30 });

    // Without the tool, the text is the answer, streamed or not.
    fake.enqueue({
      kind: 'stream',
      events: [
        { type: 'message_start', message: { ...start, stop_reason: null } },
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: '{"name": "John"}' } },
        { type: 'content_block_stop', index: 0 },
        {
          type: 'message_delta',
          delta: { stop_reason: 'end_turn', stop_sequence: null },
          usage: { output_tokens: 5 },
        },
        { type: 'message_stop' },
      ],
    });
    let plain = '';
    for await (const chunk of await client.chat.completions.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'John as JSON.' }],
      response_format: { type: 'json_object' },
      stream: true,
    }))
      plain += chunk.choices[0]?.delta?.content ?? '';
    expect(JSON.parse(plain)).toEqual({ name: 'John' });
  });
});
