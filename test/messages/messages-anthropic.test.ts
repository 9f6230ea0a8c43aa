/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// /v1/messages natively on Anthropic: the official @anthropic-ai/sdk → the gateway → a fake Anthropic
// Messages API replaying recorded answers. The client's body reaches Anthropic as it was sent; answers and
// stream events reach the client as Anthropic sent them, and match Anthropic's documented shapes.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAnthropicJsonFixture, readAnthropicStreamFixture } from '../fakes/anthropic/fixtures.js';
import { countWords, startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { postWithConfig, startGateway, type TestGateway } from '../helpers/gateway.js';
import { logsOf, traceHeaders } from '../routing/support.js';
import {
  eventsOf,
  expectAnthropicShape,
  expectMessagesGrammar,
  postRawSse,
  type StreamEvent,
} from './anthropic-shapes.js';

const API_KEY = 'sk-ant-messages';
const MODEL = 'claude-opus-5';

let gateway: TestGateway;
let fake: FakeAnthropic;

function anthropicClient(
  config: Record<string, unknown>,
  headers: Record<string, string> = {},
  apiKey = 'unused',
) {
  return new Anthropic({
    baseURL: gateway.origin,
    apiKey,
    maxRetries: 0,
    defaultHeaders: {
      'x-gateway-api-key': gateway.adminKey,
      'x-gateway-config': JSON.stringify(config),
      ...headers,
    },
  });
}

const config = () => ({ provider: 'anthropic', api_key: API_KEY, custom_host: fake.url });
const lastRequest = () =>
  fake.requests.at(-1)! as { body: any; headers: Record<string, string>; path: string };

beforeAll(async () => {
  fake = await startFakeAnthropic({ apiKey: API_KEY });
  gateway = await startGateway();
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

describe('messages.create on Anthropic', () => {
  it("relays Anthropic's answer byte for byte and sends the client's body as it is", async () => {
    const recorded = readAnthropicJsonFixture('anthropic-text.json');
    const { traceId, headers } = traceHeaders();
    // The client's API version reaches Anthropic (the SDK sends its own unless told otherwise).
    const client = anthropicClient(config(), { ...headers, 'anthropic-version': '2023-06-01' });
    const body = {
      model: MODEL,
      max_tokens: 256,
      system: [
        { type: 'text' as const, text: 'You are friendly.', cache_control: { type: 'ephemeral' as const } },
      ],
      messages: [{ role: 'user' as const, content: 'Hello, how are you?' }],
      top_k: 5,
      metadata: { user_id: 'user-1' },
    };
    const message = await client.messages.create(body);
    expectAnthropicShape('Message', message);
    expect(message).toEqual(recorded);

    const sent = lastRequest();
    expect(sent.body).toEqual(body);
    expect(sent.headers['x-api-key']).toBe(API_KEY);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');

    const [record] = await logsOf(gateway, traceId, 1);
    expect(record.endpoint).toBe('messages');
    expect(record.provider).toBe('anthropic');
    const usage = recorded.usage as { input_tokens: number; output_tokens: number };
    expect(record.prompt_tokens).toBe(usage.input_tokens);
    expect(record.completion_tokens).toBe(usage.output_tokens);
  });

  // The SDK's _request_id and APIError.requestID, what Anthropic's support asks for, are its request-id.
  it("gives the SDK Anthropic's request-id on answers and errors", async () => {
    const client = anthropicClient(config());
    const params = { model: MODEL, max_tokens: 64, messages: [{ role: 'user' as const, content: 'Hi' }] };
    const message = await client.messages.create(params);
    expect(message._request_id).toMatch(/^req_fake_\d+$/);
    fake.enqueue({ kind: 'error', status: 400, type: 'invalid_request_error', message: 'bad' });
    const error = await client.messages.create(params).catch((err: unknown) => err);
    expect((error as InstanceType<typeof Anthropic.APIError>).requestID).toMatch(/^req_fake_error_\d+$/);
    const streamed = await client.messages.create({ ...params, stream: true }).withResponse();
    expect(streamed.request_id).toMatch(/^req_fake_\d+$/);
    for await (const _event of streamed.data) {
      // read to the end
    }
  });

  it("takes the client's x-api-key as its provider key when the target has none", async () => {
    const client = anthropicClient({ provider: 'anthropic', custom_host: fake.url }, {}, API_KEY);
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(message.type).toBe('message');
    expect(lastRequest().headers['x-api-key']).toBe(API_KEY);
  });
});

describe('messages.stream on Anthropic', () => {
  it("relays every event with Anthropic's own text, and logs the stream's tokens", async () => {
    const lines = readAnthropicStreamFixture('anthropic-text.chunks.txt');
    const { traceId, headers } = traceHeaders();
    const raw = await postRawSse(
      `${gateway.url}/messages`,
      { ...headers, 'x-gateway-api-key': gateway.adminKey, 'x-gateway-config': JSON.stringify(config()) },
      { model: MODEL, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Hello' }] },
    );
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toContain('text/event-stream');
    expect(raw.frames.map((frame) => frame.data)).toEqual(lines);
    const events = eventsOf(raw.frames);
    expectMessagesGrammar(events);

    const start = events[0] as any;
    const delta = events.find((event) => event.type === 'message_delta') as any;
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record.endpoint).toBe('messages');
    expect(record.model).toBe(start.message.model);
    expect(record.prompt_tokens).toBe(start.message.usage.input_tokens);
    expect(record.completion_tokens).toBe(delta.usage.output_tokens);
    const text = events
      .filter((event) => event.delta?.type === 'text_delta')
      .map((event) => (event.delta as { text: string }).text)
      .join('');
    expect((record as unknown as { response_body: unknown }).response_body).toEqual({
      choices: [{ index: 0, content: text }],
    });
  });

  it('gives the SDK its events and final message', async () => {
    const recorded = readAnthropicJsonFixture('anthropic-text.json') as any;
    const stream = anthropicClient(config()).messages.stream({
      model: MODEL,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hello, how are you?' }],
    });
    const events: StreamEvent[] = [];
    for await (const event of stream) events.push(event as unknown as StreamEvent);
    const final = await stream.finalMessage();
    expectMessagesGrammar(events);
    expectAnthropicShape('Message', final);
    expect(final.content[0]).toMatchObject({ type: 'text' });
    expect((final.content[0] as { text: string }).text.length).toBeGreaterThan(0);
    expect(final.stop_reason).toBe(recorded.stop_reason);
  });

  // Recorded: a message_start sent twice. The SDK refuses a second one ("Unexpected event order").
  it('relays a repeated message_start once', async () => {
    fake.enqueue({ kind: 'stream', fixture: 'duplicate-message-start.chunks.txt' });
    const stream = anthropicClient(config()).messages.stream({
      model: MODEL,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    const events: StreamEvent[] = [];
    for await (const event of stream) events.push(event as unknown as StreamEvent);
    expectMessagesGrammar(events);
    expect(events.filter((event) => event.type === 'message_start')).toHaveLength(1);
    expect((await stream.finalMessage()).content).toEqual([{ type: 'text', text: 'Hello, World!' }]);
  });

  // Recorded: a second message (another id) begun while the first was still open, its tool call cut.
  it('ends a stream that starts a second message inside the first with event: error', async () => {
    fake.enqueue({ kind: 'stream', fixture: 'spliced-message-start.chunks.txt' });
    const raw = await postRawSse(
      `${gateway.url}/messages`,
      { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-config': JSON.stringify(config()) },
      { model: MODEL, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Hello' }] },
    );
    expect(raw.frames.filter((frame) => frame.event === 'message_start')).toHaveLength(1);
    const last = raw.frames.at(-1)!;
    expect(last.event).toBe('error');
    expect(JSON.parse(last.data).error).toMatchObject({ type: 'api_error' });
    expect(JSON.parse(last.data).error.message).toContain('msg_second');
    expect(raw.frames.some((frame) => frame.event === 'message_stop')).toBe(false);
  });

  // The SDK throws on a content event before message_start ("Unexpected event order"), with no error
  // the caller can tell from its own.
  it.each([
    [
      'content_block_start',
      [
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
      ],
    ],
    [
      'message_delta',
      [{ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 1 } }],
    ],
  ])(
    'answers a stream whose %s comes before message_start as an invalid upstream answer',
    async (_name, events) => {
      fake.enqueue({ kind: 'stream', events: [...events, { type: 'message_stop' }] });
      const stream = anthropicClient(config()).messages.stream({
        model: MODEL,
        max_tokens: 64,
        messages: [{ role: 'user', content: 'Hello' }],
      });
      const error = await stream.finalMessage().catch((err: unknown) => err);
      expect(error).toBeInstanceOf(Anthropic.APIError);
      expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(502);
      expect((error as Error).message).toContain('before message_start');
    },
  );

  it('ends a stream that fails inside Anthropic with event: error and no message_stop', async () => {
    fake.enqueue({
      kind: 'stream',
      fixture: 'anthropic-text.chunks.txt',
      error: { type: 'overloaded_error', message: 'Overloaded', afterEvents: 4 },
    });
    const raw = await postRawSse(
      `${gateway.url}/messages`,
      { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-config': JSON.stringify(config()) },
      { model: MODEL, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Hello' }] },
    );
    const last = raw.frames.at(-1)!;
    expect(last.event).toBe('error');
    expectAnthropicShape('ErrorResponse', JSON.parse(last.data));
    expect(JSON.parse(last.data).error).toMatchObject({ type: 'overloaded_error', message: 'Overloaded' });
    expect(raw.frames.some((frame) => frame.event === 'message_stop')).toBe(false);
  });
});

describe('a multi-turn conversation with thinking and tool use on Anthropic', () => {
  it('sends thinking signatures, tool use and cache_control back to Anthropic unchanged', async () => {
    const recorded = readAnthropicJsonFixture('anthropic-clear-thinking.1.json') as any;
    const thinking = recorded.content.find((block: { type: string }) => block.type === 'thinking');
    fake.enqueue({
      kind: 'json',
      body: {
        ...recorded,
        content: [thinking, { type: 'tool_use', id: 'toolu_01A', name: 'divide', input: { a: 925, b: 5 } }],
        stop_reason: 'tool_use',
      },
    });
    const client = anthropicClient(config());
    const tools = [
      {
        name: 'divide',
        description: 'Divides a by b',
        input_schema: {
          type: 'object' as const,
          properties: { a: { type: 'number' }, b: { type: 'number' } },
          required: ['a', 'b'],
        },
        cache_control: { type: 'ephemeral' as const },
      },
    ];
    const question = { role: 'user' as const, content: 'What is 925 divided by 5?' };
    const thinkingOption = { type: 'enabled' as const, budget_tokens: 1024 };
    const first = await client.messages.create({
      model: MODEL,
      max_tokens: 2048,
      thinking: thinkingOption,
      tools,
      messages: [question],
    });
    expectAnthropicShape('Message', first);
    expect(first.stop_reason).toBe('tool_use');
    const toolUse = first.content.find((block) => block.type === 'tool_use')!;

    const second = await client.messages.create({
      model: MODEL,
      max_tokens: 2048,
      thinking: thinkingOption,
      tools,
      messages: [
        question,
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: toolUse.id,
              content: '185',
              cache_control: { type: 'ephemeral' },
            },
          ],
        },
      ],
    });
    expectAnthropicShape('Message', second);
    const sent = lastRequest().body;
    expect(sent.messages[1].content[0]).toEqual(thinking);
    expect(sent.messages[1].content[0].signature).toBe(thinking.signature);
    expect(sent.messages[1].content[1]).toEqual({
      type: 'tool_use',
      id: 'toolu_01A',
      name: 'divide',
      input: { a: 925, b: 5 },
    });
    expect(sent.messages[2].content[0].cache_control).toEqual({ type: 'ephemeral' });
    expect(sent.tools[0].cache_control).toEqual({ type: 'ephemeral' });
    expect(sent.thinking).toEqual(thinkingOption);
  });

  it('streams thinking with its signature_delta exactly as recorded', async () => {
    fake.enqueue({ kind: 'stream', fixture: 'anthropic-clear-thinking.1.chunks.txt' });
    const stream = anthropicClient(config()).messages.stream({
      model: MODEL,
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: 'What is 925 divided by 5?' }],
    });
    const events: StreamEvent[] = [];
    for await (const event of stream) events.push(event as unknown as StreamEvent);
    expectMessagesGrammar(events);
    const final = await stream.finalMessage();
    const signature = readAnthropicStreamFixture('anthropic-clear-thinking.1.chunks.txt')
      .map((line) => JSON.parse(line))
      .find((event) => event.delta?.type === 'signature_delta').delta.signature;
    expect(final.content[0]).toMatchObject({ type: 'thinking', signature });
  });
});

describe('messages.countTokens on Anthropic', () => {
  it("answers with Anthropic's own count", async () => {
    const body = { model: MODEL, messages: [{ role: 'user' as const, content: 'How many tokens is this?' }] };
    const counted = await anthropicClient(config()).messages.countTokens(body);
    expectAnthropicShape('CountTokensResponse', counted);
    expect(lastRequest().path).toBe('/v1/messages/count_tokens');
    expect(counted.input_tokens).toBe(countWords(lastRequest().body));
    expect(lastRequest().body).toEqual(body);
  });
});

describe("errors in Anthropic's shape", () => {
  it('refuses a body without max_tokens, naming it', async () => {
    const client = anthropicClient(config());
    const error = await client.messages
      .create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }] } as any)
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    const body = (error as InstanceType<typeof Anthropic.BadRequestError>).error;
    expectAnthropicShape('ErrorResponse', body);
    expect((body as any).error.message).toContain('max_tokens');
  });

  it('names a content block field that is missing', async () => {
    const response = await postWithConfig(gateway, '/messages', config(), {
      model: MODEL,
      max_tokens: 10,
      messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 'x', name: 'f' }] }],
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as any;
    expectAnthropicShape('ErrorResponse', body);
    expect(body.error.message).toContain('messages[0].content[0].input');
  });

  it('answers a bad gateway key with authentication_error', async () => {
    const client = new Anthropic({
      baseURL: gateway.origin,
      apiKey: API_KEY,
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': 'not-a-key', 'x-gateway-config': JSON.stringify(config()) },
    });
    const error = await client.messages
      .create({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
    expectAnthropicShape(
      'ErrorResponse',
      (error as InstanceType<typeof Anthropic.AuthenticationError>).error,
    );
    expect(JSON.stringify((error as any).error)).not.toContain('not-a-key');
  });

  it("passes Anthropic's own error type and status on", async () => {
    fake.enqueue({
      kind: 'error',
      status: 429,
      type: 'rate_limit_error',
      message: 'Number of requests exceeded',
    });
    const error = await anthropicClient(config())
      .messages.create({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    expect((error as any).error).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: 'Number of requests exceeded' },
    });
  });
});
