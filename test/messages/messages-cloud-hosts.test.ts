/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// /v1/messages natively on the clouds that host Claude: Bedrock (InvokeModel / InvokeModelWithResponseStream
// with `anthropic_version: bedrock-2023-05-31`, SigV4-signed) and Vertex AI (rawPredict / streamRawPredict
// with `anthropic_version: vertex-2023-10-16`). The official @anthropic-ai/sdk is the client; the fakes replay
// Anthropic's recorded answers in each cloud's framing. A model of another family on the same cloud is
// translated (Converse on Bedrock, generateContent on Vertex).
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAnthropicJsonFixture, readAnthropicStreamFixture } from '../fakes/anthropic/fixtures.js';
import { readBedrockJsonFixture } from '../fakes/bedrock/fixtures.js';
import { startFakeBedrock, withInvocationMetrics, type FakeBedrock } from '../fakes/bedrock/server.js';
import { startFakeVertex, type FakeVertex } from '../fakes/vertex-ai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import {
  eventsOf,
  expectAnthropicShape,
  expectMessagesGrammar,
  postRawSse,
  type StreamEvent,
} from './anthropic-shapes.js';
import { gatewayAnthropic } from '../helpers/anthropic-client.js';
import { vertexTarget } from '../helpers/provider-targets.js';

const CLAUDE_ON_BEDROCK = 'anthropic.claude-opus-5-v1:0';

let gateway: TestGateway;
let bedrock: FakeBedrock;
let vertex: FakeVertex;

const bedrockConfig = () => ({
  provider: 'bedrock',
  cloudc_region: 'us-east-1',
  cloudc_access_key_id: 'AKIDFAKEBEDROCK',
  cloudc_secret_access_key: 'fake-secret-key',
  custom_host: bedrock.url,
});

/** A Claude request with an image by URL: the block at messages[1].content[1], or inside a tool result. */
const urlImageRequest = (model: string) => ({
  model,
  max_tokens: 64,
  messages: [
    { role: 'user' as const, content: 'Hello' },
    { role: 'assistant' as const, content: 'Hi' },
    {
      role: 'user' as const,
      content: [
        { type: 'text' as const, text: 'What is in it?' },
        { type: 'image' as const, source: { type: 'url' as const, url: 'https://example.com/sky.png' } },
      ],
    },
  ],
});

/** The answer to a request the gateway refuses before any call, in Anthropic's error shape. */
async function refusal(request: Promise<unknown>): Promise<{ type: string; message: string }> {
  const error = await request.catch((err: unknown) => err);
  expect(error).toBeInstanceOf(Anthropic.BadRequestError);
  return ((error as InstanceType<typeof Anthropic.BadRequestError>).error as any).error;
}

beforeAll(async () => {
  bedrock = await startFakeBedrock();
  vertex = await startFakeVertex();
  gateway = await startGateway();
});

afterAll(async () => {
  await gateway?.close();
  await bedrock?.close();
  await vertex?.close();
});

describe('Claude on Bedrock', () => {
  it('calls InvokeModel with Anthropic’s body and relays the answer', async () => {
    const message = await gatewayAnthropic(gateway, bedrockConfig(), {
      'anthropic-beta': 'context-1m-2025-08-07',
    }).messages.create({
      model: CLAUDE_ON_BEDROCK,
      max_tokens: 64,
      system: 'Be brief.',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Hello', cache_control: { type: 'ephemeral' } }] },
      ],
    });
    expectAnthropicShape('Message', message);
    expect(message).toEqual(readAnthropicJsonFixture('anthropic-text.json'));
    const sent = bedrock.requests.at(-1)!;
    expect(sent.action).toBe('invoke');
    expect(sent.modelId).toBe(CLAUDE_ON_BEDROCK);
    expect(sent.body).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      anthropic_beta: ['context-1m-2025-08-07'],
      max_tokens: 64,
      system: 'Be brief.',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Hello', cache_control: { type: 'ephemeral' } }] },
      ],
    });
  });

  it('relays InvokeModelWithResponseStream events with their own text', async () => {
    bedrock.enqueue({ kind: 'anthropic-stream', fixture: 'anthropic-clear-thinking.1.chunks.txt' });
    const raw = await postRawSse(
      `${gateway.url}/messages`,
      { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-config': JSON.stringify(bedrockConfig()) },
      {
        model: CLAUDE_ON_BEDROCK,
        max_tokens: 2048,
        stream: true,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [{ role: 'user', content: 'What is 925 divided by 5?' }],
      },
    );
    expect(raw.status).toBe(200);
    // Bedrock's own counts on the last event included.
    expect(raw.frames.map((frame) => frame.data)).toEqual(
      withInvocationMetrics(readAnthropicStreamFixture('anthropic-clear-thinking.1.chunks.txt')),
    );
    expectMessagesGrammar(eventsOf(raw.frames));
    expect(bedrock.requests.at(-1)!.action).toBe('invoke-with-response-stream');
  });

  it("ends a stream with Bedrock's exception as event: error", async () => {
    bedrock.enqueue({
      kind: 'anthropic-stream',
      fixture: 'anthropic-text.chunks.txt',
      exception: { type: 'ThrottlingException', message: 'Too many tokens', afterEvents: 3 },
    });
    const raw = await postRawSse(
      `${gateway.url}/messages`,
      { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-config': JSON.stringify(bedrockConfig()) },
      { model: CLAUDE_ON_BEDROCK, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Hi' }] },
    );
    expect(raw.frames.map((frame) => frame.data).slice(0, 3)).toEqual(
      readAnthropicStreamFixture('anthropic-text.chunks.txt').slice(0, 3),
    );
    const last = raw.frames.at(-1)!;
    expect(last.event).toBe('error');
    expect(JSON.parse(last.data)).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: 'Too many tokens' },
    });
    expect(raw.frames.some((frame) => frame.event === 'message_stop')).toBe(false);
  });

  it('gives the SDK a stream it can assemble', async () => {
    const stream = gatewayAnthropic(gateway, bedrockConfig()).messages.stream({
      model: CLAUDE_ON_BEDROCK,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    const events: StreamEvent[] = [];
    for await (const event of stream) events.push(event as unknown as StreamEvent);
    expectMessagesGrammar(events);
    expectAnthropicShape('Message', await stream.finalMessage());
  });

  it('translates a model of another family to Converse', async () => {
    const message = await gatewayAnthropic(gateway, bedrockConfig()).messages.create({
      model: 'amazon.nova-pro-v1:0',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expectAnthropicShape('Message', message);
    expect(bedrock.requests.at(-1)!.action).toBe('converse');
  });

  // A Converse model that does not reason is answered without thinking, as on every translated provider
  // whose model has none (OpenAI's gpt-4o): the enabled budget is left out, not refused.
  it('answers thinking enabled on a Converse model without reasoning, without sending it', async () => {
    const message = await gatewayAnthropic(gateway, bedrockConfig()).messages.create({
      model: 'meta.llama3-70b-instruct-v1:0',
      max_tokens: 2000,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expectAnthropicShape('Message', message);
    expect(message.content.map((block) => block.type)).toEqual(['text']);
    const sent = bedrock.requests.at(-1)!.body as any;
    expect(sent.additionalModelRequestFields).toBeUndefined();
    expect(sent.inferenceConfig.maxTokens).toBe(2000);
  });

  // The client's cache breakpoints reach Converse as cache points after what they mark (Nova takes them in
  // system and messages; Claude in tools too), and the cache reads and writes Bedrock answers are the
  // Message's cache_read_input_tokens / cache_creation_input_tokens.
  it.each([
    ['us.amazon.nova-pro-v1:0', true],
    ['meta.llama3-70b-instruct-v1:0', false],
  ])('carries cache_control to %s as cachePoints where it caches (%s)', async (model, caches) => {
    const recorded = readBedrockJsonFixture('amazon-bedrock-text.json') as any;
    const usage = {
      ...recorded.usage,
      inputTokens: 12,
      cacheReadInputTokens: 1800,
      cacheWriteInputTokens: 300,
    };
    bedrock.enqueue({ kind: 'json', body: { ...recorded, usage } });
    const cache = { type: 'ephemeral' as const };
    const message = await gatewayAnthropic(gateway, bedrockConfig()).messages.create({
      model,
      max_tokens: 64,
      system: [
        { type: 'text', text: 'Long rules.', cache_control: { type: 'ephemeral', ttl: '1h' } },
        { type: 'text', text: 'Today is Friday.' },
      ],
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: [
            {
              type: 'tool_use',
              id: 'toolu_1',
              name: 'get_weather',
              input: { city: 'Paris' },
              cache_control: cache,
            },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny', cache_control: cache },
            { type: 'text', text: 'Long document.', cache_control: { type: 'ephemeral', ttl: '5m' } },
            { type: 'text', text: 'Summarise it.' },
          ],
        },
      ],
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: {} } }],
    });
    const sent = bedrock.requests.at(-1)!.body as any;
    const point = { cachePoint: { type: 'default' } };
    if (!caches) {
      expect(JSON.stringify(sent)).not.toContain('cachePoint');
      return;
    }
    expect(sent.system).toEqual([
      { text: 'Long rules.' },
      { cachePoint: { type: 'default', ttl: '1h' } },
      { text: 'Today is Friday.' },
    ]);
    expect(sent.messages[1].content.at(-1)).toEqual(point);
    expect(sent.messages[2].content).toEqual([
      { toolResult: { toolUseId: 'toolu_1', content: [{ text: 'sunny' }] } },
      point,
      { text: 'Long document.' },
      { cachePoint: { type: 'default', ttl: '5m' } },
      { text: 'Summarise it.' },
    ]);
    expect(message.usage).toMatchObject({
      input_tokens: 12,
      cache_read_input_tokens: 1800,
      cache_creation_input_tokens: 300,
    });
  });

  // Anthropic's automatic prompt caching: a cache_control at the request's top level puts the breakpoint on
  // the last cacheable block, the end of the last message; a provider that caches gets a cache point there.
  it.each([
    ['us.amazon.nova-pro-v1:0', true],
    ['meta.llama3-70b-instruct-v1:0', false],
  ])(
    'carries a request-level cache_control to %s as a cachePoint after the last message (%s)',
    async (model, caches) => {
      const recorded = readBedrockJsonFixture('amazon-bedrock-text.json') as any;
      for (const [cacheControl, point] of [
        [{ type: 'ephemeral' }, { cachePoint: { type: 'default' } }],
        [{ type: 'ephemeral', ttl: '1h' }, { cachePoint: { type: 'default', ttl: '1h' } }],
      ]) {
        bedrock.enqueue({ kind: 'json', body: recorded });
        const params = {
          model,
          max_tokens: 64,
          system: 'Long rules.',
          cache_control: cacheControl,
          messages: [
            { role: 'user', content: 'Hi' },
            { role: 'assistant', content: 'Hello.' },
            {
              role: 'user',
              content: [
                { type: 'text', text: 'Long document.' },
                { type: 'text', text: 'Sum it up.' },
              ],
            },
          ],
        };
        const message = await gatewayAnthropic(gateway, bedrockConfig()).messages.create(params as any);
        expectAnthropicShape('Message', message);
        const sent = bedrock.requests.at(-1)!.body as any;
        if (!caches) {
          expect(JSON.stringify(sent)).not.toContain('cachePoint');
          continue;
        }
        expect(sent.system).toEqual([{ text: 'Long rules.' }]);
        expect(sent.messages.slice(0, 2).map((m: any) => m.content)).toEqual([
          [{ text: 'Hi' }],
          [{ text: 'Hello.' }],
        ]);
        expect(sent.messages[2].content).toEqual([{ text: 'Long document.' }, { text: 'Sum it up.' }, point]);
      }
    },
  );

  // Anthropic and Bedrock refuse a request with more than 4 breakpoints: the gateway refuses it first, in
  // Anthropic's error shape, naming the fifth, and calls no provider.
  it("refuses a fifth cache_control breakpoint in Anthropic's error shape, calling no provider", async () => {
    const calls = bedrock.requests.length;
    const cache = { type: 'ephemeral' as const };
    const error = await refusal(
      gatewayAnthropic(gateway, bedrockConfig()).messages.create({
        model: CLAUDE_ON_BEDROCK,
        max_tokens: 64,
        system: [{ type: 'text', text: 'Long rules.', cache_control: cache }],
        messages: [
          {
            role: 'user',
            content: ['One.', 'Two.', 'Three.', 'Four.'].map((text) => ({
              type: 'text' as const,
              text,
              cache_control: cache,
            })),
          },
        ],
      }),
    );
    expect(error.type).toBe('invalid_request_error');
    expect(error.message).toContain('messages[0].content[3].cache_control');
    expect(bedrock.requests.length).toBe(calls);
  });

  // Automatic caching takes one of Converse's 4 cache points: a request whose own breakpoints fill them gets
  // no fifth (Bedrock would refuse it), and its own reach Converse as they are.
  it('adds no automatic cache point when the explicit breakpoints fill the 4', async () => {
    bedrock.enqueue({ kind: 'json', body: readBedrockJsonFixture('amazon-bedrock-text.json') });
    const cache = { type: 'ephemeral' as const };
    const message = await gatewayAnthropic(gateway, bedrockConfig()).messages.create({
      model: 'us.amazon.nova-pro-v1:0',
      max_tokens: 64,
      cache_control: cache,
      system: [{ type: 'text', text: 'Long rules.', cache_control: cache }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Long document.', cache_control: cache },
            { type: 'text', text: 'Its appendix.', cache_control: cache },
            { type: 'text', text: 'Its index.', cache_control: cache },
            { type: 'text', text: 'Sum it up.' },
          ],
        },
      ],
    } as any);
    expectAnthropicShape('Message', message);
    const sent = bedrock.requests.at(-1)!.body as any;
    const point = { cachePoint: { type: 'default' } };
    expect(sent.system).toEqual([{ text: 'Long rules.' }, point]);
    expect(sent.messages[0].content).toEqual([
      { text: 'Long document.' },
      point,
      { text: 'Its appendix.' },
      point,
      { text: 'Its index.' },
      point,
      { text: 'Sum it up.' },
    ]);
  });

  // The automatic cache point comes last: kept an hour after a five-minute one, Bedrock would refuse it.
  it('refuses a request-level cache_control kept longer than a breakpoint before it', async () => {
    const calls = bedrock.requests.length;
    const error = await refusal(
      gatewayAnthropic(gateway, bedrockConfig()).messages.create({
        model: 'us.amazon.nova-pro-v1:0',
        max_tokens: 64,
        cache_control: { type: 'ephemeral', ttl: '1h' },
        system: [{ type: 'text', text: 'Long rules.', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: 'Sum it up.' }],
      } as any),
    );
    expect(error.type).toBe('invalid_request_error');
    expect(error.message).toContain('cache_control.ttl');
    expect(bedrock.requests.length).toBe(calls);
  });

  // A reasoning model on Converse answers its reasoning (reasoningContent) whatever is asked; Anthropic
  // answers thinking blocks only to a request that turned thinking on, so only such a request has them.
  it.each([
    [undefined, ['text']],
    [{ type: 'disabled' }, ['text']],
    [{ type: 'adaptive' }, ['thinking', 'text']],
    // R1 reasons whatever is asked and Converse has no thinking field for it: an enabled budget is not
    // sent (Bedrock would refuse Anthropic's field), and the reasoning it answers is shown, as asked.
    [{ type: 'enabled', budget_tokens: 1024 }, ['thinking', 'text']],
  ])(
    "answers a Converse model's reasoning when thinking is %j as %j, streamed and not",
    async (thinking, types) => {
      const recorded = readBedrockJsonFixture('amazon-bedrock-reasoning.json') as any;
      const [reasoning, text] = recorded.output.message.content;
      const request = {
        model: 'us.deepseek.r1-v1:0',
        max_tokens: 2000,
        messages: [{ role: 'user' as const, content: 'How many r are in strawberry?' }],
        ...(thinking ? { thinking } : {}),
      } as Anthropic.MessageCreateParamsNonStreaming;
      bedrock.enqueue({ kind: 'json', fixture: 'amazon-bedrock-reasoning.json' });
      const message = await gatewayAnthropic(gateway, bedrockConfig()).messages.create(request);
      expectAnthropicShape('Message', message);
      expect(bedrock.requests.at(-1)!.action).toBe('converse');
      expect(bedrock.requests.at(-1)!.body.additionalModelRequestFields).toBeUndefined();
      expect(message.content.map((block) => block.type)).toEqual(types);
      expect(message.content.at(-1)).toEqual({ type: 'text', text: text.text });
      if (types[0] === 'thinking') {
        expect(message.content[0]).toEqual({
          type: 'thinking',
          thinking: reasoning.reasoningContent.reasoningText.text,
          signature: reasoning.reasoningContent.reasoningText.signature,
        });
      }
      // The reasoning was spent: its tokens are in output_tokens whether it is shown or not.
      expect(message.usage.output_tokens).toBe(recorded.usage.outputTokens);

      bedrock.enqueue({ kind: 'stream', fixture: 'amazon-bedrock-reasoning.chunks.txt' });
      const stream = gatewayAnthropic(gateway, bedrockConfig()).messages.stream(request);
      const events: StreamEvent[] = [];
      for await (const event of stream) events.push(event as unknown as StreamEvent);
      expectMessagesGrammar(events);
      const final = await stream.finalMessage();
      expect(final.content.map((block) => block.type)).toEqual(types);
      const starts = events.filter((e) => e.type === 'content_block_start');
      expect(starts.map((e) => (e as any).index)).toEqual(types.map((_, i) => i));
      expect(events.some((e) => (e as any).delta?.type === 'thinking_delta')).toBe(types[0] === 'thinking');
    },
  );

  // Converse takes images as bytes only. The refusal names the image's source in the client's request, as
  // Anthropic numbers it (a system prompt and tool results do not shift it), not the chat request's part.
  it("refuses an image by URL on a Converse model, naming the block's source", async () => {
    const calls = bedrock.requests.length;
    const error = await gatewayAnthropic(gateway, bedrockConfig())
      .messages.create({
        model: 'amazon.nova-pro-v1:0',
        max_tokens: 64,
        system: 'Describe images.',
        messages: [
          { role: 'user', content: 'Weather?' },
          {
            role: 'assistant',
            content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' },
              { type: 'text', text: 'And this?' },
              { type: 'image', source: { type: 'url', url: 'https://example.com/sky.png' } },
            ],
          },
        ],
        tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: {} } }],
      })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    const body = (error as InstanceType<typeof Anthropic.BadRequestError>).error as any;
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toMatch(/^messages\[2\]\.content\[2\]\.source: /);
    expect(body.error.message).not.toContain('image_url');
    expect(bedrock.requests.length).toBe(calls);
  });

  // Claude on Bedrock takes image sources of type base64 only: a URL one is refused before the call,
  // naming it, rather than answered by Bedrock's ValidationException.
  it('refuses an image by URL for Claude, naming its source', async () => {
    const calls = bedrock.requests.length;
    const error = await refusal(
      gatewayAnthropic(gateway, bedrockConfig()).messages.create(urlImageRequest(CLAUDE_ON_BEDROCK)),
    );
    expect(error.type).toBe('invalid_request_error');
    expect(error.message).toMatch(/^messages\[2\]\.content\[1\]\.source: .*base64/);
    expect(bedrock.requests.length).toBe(calls);
  });

  it('estimates count_tokens (Bedrock has no count the gateway calls)', async () => {
    const counted = await gatewayAnthropic(gateway, bedrockConfig()).messages.countTokens({
      model: CLAUDE_ON_BEDROCK,
      messages: [{ role: 'user', content: 'How long is this?' }],
    });
    expectAnthropicShape('CountTokensResponse', counted);
    expect(counted.input_tokens).toBeGreaterThan(0);
  });
});

describe('Claude on Vertex AI', () => {
  it('calls rawPredict with Anthropic’s body and relays the answer', async () => {
    const message = await gatewayAnthropic(gateway, vertexTarget(vertex)).messages.create({
      model: 'claude-opus-5',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expectAnthropicShape('Message', message);
    expect(message).toEqual(readAnthropicJsonFixture('anthropic-text.json'));
    const sent = vertex.requests.at(-1)!;
    expect(sent.path).toMatch(/\/publishers\/anthropic\/models\/claude-opus-5:rawPredict$/);
    expect(sent.body).toEqual({
      anthropic_version: 'vertex-2023-10-16',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hello' }],
    });
  });

  // As on Bedrock: Claude on Vertex AI takes image sources of type base64 only.
  it('refuses an image by URL for Claude, naming its source', async () => {
    const calls = vertex.requests.length;
    const error = await refusal(
      gatewayAnthropic(gateway, vertexTarget(vertex)).messages.create(urlImageRequest('claude-opus-5')),
    );
    expect(error.type).toBe('invalid_request_error');
    expect(error.message).toMatch(/^messages\[2\]\.content\[1\]\.source: .*base64/);
    expect(vertex.requests.length).toBe(calls);
  });

  it('relays streamRawPredict events with their own text', async () => {
    const raw = await postRawSse(
      `${gateway.url}/messages`,
      { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-config': JSON.stringify(vertexTarget(vertex)) },
      {
        model: 'claude-opus-5',
        max_tokens: 64,
        stream: true,
        messages: [{ role: 'user', content: 'Hello' }],
      },
    );
    expect(raw.status).toBe(200);
    expect(raw.frames.map((frame) => frame.data)).toEqual(
      readAnthropicStreamFixture('anthropic-text.chunks.txt'),
    );
    expectMessagesGrammar(eventsOf(raw.frames));
    expect(vertex.requests.at(-1)!.path).toMatch(/:streamRawPredict$/);
    expect((vertex.requests.at(-1)!.body as any).stream).toBe(true);
  });

  it('translates a Gemini model to generateContent', async () => {
    const message = await gatewayAnthropic(gateway, vertexTarget(vertex)).messages.create({
      model: 'gemini-2.5-flash',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expectAnthropicShape('Message', message);
    expect(vertex.requests.at(-1)!.path).toMatch(
      /\/publishers\/google\/models\/gemini-2.5-flash:generateContent$/,
    );
  });
});

// Bedrock and Vertex AI take no request-level cache_control (400 "cache_control: Extra inputs are not
// permitted": automatic caching is Anthropic's API's alone). Claude there gets what automatic caching does:
// a breakpoint on the last cacheable block, unless it has one or the request's own fill the 4.
describe('automatic caching for Claude on the clouds', () => {
  const cloudRequest = () => {
    const sent = [bedrock.requests.at(-1)!.body, vertex.requests.at(-1)!.body] as any[];
    return sent;
  };

  it('moves a request-level cache_control onto the last cacheable block', async () => {
    const hour = { type: 'ephemeral' as const, ttl: '1h' as const };
    const params = {
      max_tokens: 64,
      cache_control: hour,
      system: [{ type: 'text', text: 'Long rules.', cache_control: hour }],
      messages: [
        { role: 'user', content: 'Hi' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Hello.' },
            { type: 'thinking', thinking: 'Done.', signature: 'sig' },
          ],
        },
      ],
    };
    await gatewayAnthropic(gateway, bedrockConfig()).messages.create({
      ...params,
      model: CLAUDE_ON_BEDROCK,
    } as any);
    await gatewayAnthropic(gateway, vertexTarget(vertex)).messages.create({
      ...params,
      model: 'claude-opus-5',
    } as any);
    for (const body of cloudRequest()) {
      expect(body).not.toHaveProperty('cache_control');
      expect(body.system).toEqual(params.system);
      expect(body.messages).toEqual([
        { role: 'user', content: 'Hi' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Hello.', cache_control: hour },
            { type: 'thinking', thinking: 'Done.', signature: 'sig' },
          ],
        },
      ]);
    }
  });

  it('leaves the blocks as they are when the last has a breakpoint or the request has 4', async () => {
    const mark = { type: 'ephemeral' as const };
    const four = {
      max_tokens: 64,
      cache_control: mark,
      system: [{ type: 'text', text: 'Long rules.', cache_control: mark }],
      messages: [
        {
          role: 'user',
          content: ['One.', 'Two.', 'Three.', 'Four.'].map((text, k) => ({
            type: 'text',
            text,
            ...(k < 3 ? { cache_control: mark } : {}),
          })),
        },
      ],
    };
    await gatewayAnthropic(gateway, bedrockConfig()).messages.create({
      ...four,
      model: CLAUDE_ON_BEDROCK,
    } as any);
    await gatewayAnthropic(gateway, vertexTarget(vertex)).messages.create({
      ...four,
      model: 'claude-opus-5',
    } as any);
    for (const body of cloudRequest()) {
      expect(body).not.toHaveProperty('cache_control');
      expect(body.messages).toEqual(four.messages);
    }
  });

  // An empty prefill (a final assistant message of "") is no block to cache, and Anthropic refuses a
  // cache_control on an empty text block: the breakpoint goes on the last block before it.
  it('puts the breakpoint before an empty prefill, not on it', async () => {
    const mark = { type: 'ephemeral' as const };
    const params = {
      max_tokens: 64,
      cache_control: mark,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Long document.' }] },
        { role: 'assistant', content: '' },
      ],
    };
    await gatewayAnthropic(gateway, bedrockConfig()).messages.create({
      ...params,
      model: CLAUDE_ON_BEDROCK,
    } as any);
    await gatewayAnthropic(gateway, vertexTarget(vertex)).messages.create({
      ...params,
      model: 'claude-opus-5',
    } as any);
    for (const body of cloudRequest()) {
      expect(body.messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'Long document.', cache_control: mark }] },
        { role: 'assistant', content: '' },
      ]);
    }
  });
});
