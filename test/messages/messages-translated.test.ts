/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// /v1/messages on providers without Anthropic's API: the official @anthropic-ai/sdk → the gateway, which
// translates the request to chat for an OpenAI-wire fake and a Gemini fake (replaying Google's recorded
// answers), and answers in Anthropic's Message object and stream grammar. Also: a fallback from Anthropic
// to an OpenAI-wire provider inside one call, and count_tokens estimated where there is no count.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { estimateInputTokens } from '../../src/gateway/messages/estimate-input-tokens.js';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { providerFixturesDir } from '../fakes/cohere/fixtures.js';
import { readGoogleFixture, readGoogleStream } from '../fakes/google/fixtures.js';
import { startFakeGoogle, type FakeGoogle } from '../fakes/google/server.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { logsOf, traceHeaders } from '../routing/support.js';
import {
  eventsOf,
  expectAnthropicShape,
  expectMessagesGrammar,
  postRawSse,
  type StreamEvent,
} from './anthropic-shapes.js';
import { gatewayAnthropic } from '../helpers/anthropic-client.js';

const ANTHROPIC_KEY = 'sk-ant-translated';

let gateway: TestGateway;
let openai: FakeUpstream;
let google: FakeGoogle;
let anthropic: FakeAnthropic;

const openaiTarget = () => ({ provider: 'openai', api_key: 'sk-test', custom_host: openai.url });
const googleTarget = () => ({ provider: 'google', api_key: google.apiKey, custom_host: google.url });
const lastChat = () => openai.requests.at(-1)!.body as any;

/** Queues on the OpenAI fake a chat stream answering "Hi!", its usage in a last chunk of no choices. */
function enqueueHiStream(base: { id: string; created: number; model: string }, usage: object): void {
  const chunk = (rest: object) =>
    `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', ...rest })}\n\n`;
  openai.enqueue({
    status: 200,
    headers: { 'content-type': 'text/event-stream' },
    body: [
      chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi!' }, finish_reason: null }] }),
      chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
      chunk({ choices: [], usage }),
      'data: [DONE]\n\n',
    ].join(''),
  });
}

async function streamEvents(stream: ReturnType<Anthropic['messages']['stream']>) {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event as unknown as StreamEvent);
  return { events, final: await stream.finalMessage() };
}

const weatherTool = {
  name: 'get_weather',
  description: 'Current weather of a city',
  input_schema: {
    type: 'object' as const,
    properties: { city: { type: 'string' } },
    required: ['city'],
  },
};

beforeAll(async () => {
  openai = await startFakeOpenAI({ name: 'upstream' });
  google = await startFakeGoogle();
  anthropic = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY });
  gateway = await startGateway();
});

afterAll(async () => {
  await gateway?.close();
  await openai?.close();
  await google?.close();
  await anthropic?.close();
});

describe('an OpenAI-wire provider', () => {
  it('answers messages.create with a Message translated from the chat answer', async () => {
    const { traceId, headers } = traceHeaders();
    const message = await gatewayAnthropic(gateway, openaiTarget(), headers).messages.create({
      model: 'gpt-4o-mini',
      max_tokens: 100,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello there' }] }],
      temperature: 0.5,
      top_k: 3,
      stop_sequences: ['END'],
      metadata: { user_id: 'u-42' },
      // The SDK's types no longer list temperature; the API still takes it.
    } as Anthropic.MessageCreateParamsNonStreaming);
    expectAnthropicShape('Message', message);
    expect(message.content).toEqual([{ type: 'text', text: '[upstream] Hello there' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.id).toMatch(/^msg_/);
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);

    const sent = lastChat();
    expect(sent.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hello there' },
    ]);
    expect(sent).toMatchObject({
      model: 'gpt-4o-mini',
      max_completion_tokens: 100,
      temperature: 0.5,
      stop: ['END'],
      user: 'u-42',
    });
    expect(sent.max_tokens).toBeUndefined();
    expect(sent.top_k).toBeUndefined();

    const records = await logsOf(gateway, traceId, 1);
    expect(records[0].endpoint).toBe('messages');
    expect(records[0].provider).toBe('openai');
    expect(records[0].prompt_tokens).toBe(message.usage.input_tokens);
    expect(records[0].completion_tokens).toBe(message.usage.output_tokens);
  });

  it("streams Anthropic's event grammar with usage in message_delta", async () => {
    const { events, final } = await streamEvents(
      gatewayAnthropic(gateway, openaiTarget()).messages.stream({
        model: 'gpt-4o-mini',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'Stream me a short answer' }],
      }),
    );
    expectMessagesGrammar(events);
    expectAnthropicShape('Message', final);
    expect(final.content).toEqual([{ type: 'text', text: '[upstream] Stream me a short answer' }]);
    const delta = events.find((e) => e.type === 'message_delta') as any;
    expect(delta.delta.stop_reason).toBe('end_turn');
    expect(delta.usage.output_tokens).toBeGreaterThan(0);
    expect(delta.usage.input_tokens).toBeGreaterThan(0);
    expect(lastChat().stream_options).toEqual({ include_usage: true });
  });

  // The SDK's stream helper builds the Message from message_start's usage, each count of message_delta's
  // over it (a null there is no count), and cache_creation from message_start alone: the translated stream
  // gives every field Anthropic's does, so the helper's Message has the usage of the same call answered whole,
  // but for the breakdown of the writes, not known when message_start comes before the usage (null).
  it('gives stream.finalMessage() the usage of the same call answered whole', async () => {
    const request = {
      model: 'gpt-4o-mini',
      max_tokens: 100,
      messages: [{ role: 'user' as const, content: 'Usage alike' }],
    };
    const whole = await gatewayAnthropic(gateway, openaiTarget()).messages.create(request);
    const stream = gatewayAnthropic(gateway, openaiTarget()).messages.stream(request);
    let startUsage: object | undefined;
    // The helper's Message is message_start's, its usage updated in place: its keys are read as they came.
    for await (const event of stream)
      if (event.type === 'message_start') startUsage ??= { ...event.message.usage };
    expect(Object.keys(startUsage!).sort()).toEqual(Object.keys(whole.usage).sort());
    expect((await stream.finalMessage()).usage).toEqual({ ...whole.usage, cache_creation: null });
  });

  it('gives stream.finalMessage() the usage answered whole from a provider that breaks no prompt down', async () => {
    const usage = { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 };
    const base = { id: 'chatcmpl-plain', created: 1, model: 'plain-model' };
    openai.enqueue({
      status: 200,
      body: {
        ...base,
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hi!' }, finish_reason: 'stop' }],
        usage,
      },
    });
    const request = {
      model: 'plain-model',
      max_tokens: 100,
      messages: [{ role: 'user' as const, content: 'x' }],
    };
    const whole = await gatewayAnthropic(gateway, openaiTarget()).messages.create(request);
    expect(whole.usage).toMatchObject({ input_tokens: 12, cache_creation_input_tokens: null });
    enqueueHiStream(base, usage);
    const final = await gatewayAnthropic(gateway, openaiTarget()).messages.stream(request).finalMessage();
    expect(final.usage).toEqual(whole.usage);
  });

  // Bedrock's Converse stream, as others, reports its cache writes with the usage at the end: message_start
  // cannot know how long they are kept, and the SDK's helper takes cache_creation from it alone.
  it('gives stream.finalMessage() no breakdown of cache writes the provider reports at the end', async () => {
    const base = { id: 'chatcmpl-writes', created: 1, model: 'writes-model' };
    const usage = {
      prompt_tokens: 1000,
      completion_tokens: 3,
      total_tokens: 1003,
      prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 900 },
    };
    enqueueHiStream(base, usage);
    const final = await gatewayAnthropic(gateway, openaiTarget())
      .messages.stream({ model: 'writes-model', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] })
      .finalMessage();
    expect(final.usage).toMatchObject({
      input_tokens: 100,
      cache_creation_input_tokens: 900,
      cache_read_input_tokens: 0,
      cache_creation: null,
    });
  });

  // Anthropic's message_delta repeats the counts (input, cache writes and reads, output), never the writes'
  // breakdown by TTL (usage.cache_creation, which message_start alone carries: the SDK's MessageDeltaUsage
  // has no such field, and its stream helper reads none there). Its recorded stream of a call whose cache
  // writes grew after message_start says the same: the count in message_delta, the breakdown left as it was.
  it("gives message_delta the usage fields of Anthropic's, as recorded, for writes reported at the end", async () => {
    const recorded = (name: string) =>
      readFileSync(path.join(providerFixturesDir('anthropic'), `${name}.chunks.txt`), 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as { type: string; usage?: Record<string, unknown> })
        .find((event) => event.type === 'message_delta')!.usage!;
    expect(recorded('anthropic-code-execution-20260120-prompt-cache.1')).not.toHaveProperty('cache_creation');
    const base = { id: 'chatcmpl-late-writes', created: 1, model: 'writes-model' };
    enqueueHiStream(base, {
      prompt_tokens: 1000,
      completion_tokens: 3,
      total_tokens: 1003,
      prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 900, cache_write_1h_tokens: 600 },
    });
    const { events, final } = await streamEvents(
      gatewayAnthropic(gateway, openaiTarget()).messages.stream({
        model: 'writes-model',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'x' }],
      }),
    );
    const delta = events.find((e) => e.type === 'message_delta') as unknown as {
      usage: Record<string, unknown>;
    };
    expect(Object.keys(delta.usage)).toEqual(Object.keys(recorded('anthropic-text')));
    expect(delta.usage).toEqual({
      input_tokens: 100,
      cache_creation_input_tokens: 900,
      cache_read_input_tokens: 0,
      output_tokens: 3,
    });
    // As with Anthropic's own stream: the count from message_delta, the breakdown from message_start.
    expect(final.usage).toMatchObject({ cache_creation_input_tokens: 900, cache_creation: null });
  });

  it('ends a stream that breaks upstream with event: error and no message_stop', async () => {
    openai.enqueue({ errorEventAfter: 3 });
    const raw = await postRawSse(
      `${gateway.url}/messages`,
      { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-config': JSON.stringify(openaiTarget()) },
      {
        model: 'gpt-4o-mini',
        max_tokens: 50,
        stream: true,
        messages: [{ role: 'user', content: 'one two three four five six' }],
      },
    );
    expect(raw.status).toBe(200);
    const last = raw.frames.at(-1)!;
    expect(last.event).toBe('error');
    expectAnthropicShape('ErrorResponse', JSON.parse(last.data));
    expect(raw.frames.some((frame) => frame.event === 'message_stop')).toBe(false);
    expect(raw.frames[0].event).toBe('message_start');
  });

  it('names each event on the wire by its type, with a ping after message_start', async () => {
    const raw = await postRawSse(
      `${gateway.url}/messages`,
      { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-config': JSON.stringify(openaiTarget()) },
      {
        model: 'gpt-4o-mini',
        max_tokens: 50,
        stream: true,
        messages: [{ role: 'user', content: 'Hi there' }],
      },
    );
    expect(raw.status).toBe(200);
    const events = eventsOf(raw.frames);
    expectMessagesGrammar(events);
    expect(events.slice(0, 2).map((e) => e.type)).toEqual(['message_start', 'ping']);
  });

  it('turns a tool call into tool_use, streamed as input_json_delta', async () => {
    const client = gatewayAnthropic(gateway, openaiTarget());
    const request = {
      model: 'gpt-4o-mini',
      max_tokens: 100,
      tools: [weatherTool],
      tool_choice: { type: 'any' as const },
      messages: [{ role: 'user' as const, content: 'Weather in Paris?' }],
    };
    const message = await client.messages.create(request);
    expectAnthropicShape('Message', message);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([
      expect.objectContaining({
        type: 'tool_use',
        name: 'get_weather',
        input: { input: 'Weather in Paris?' },
      }),
    ]);
    expect(lastChat().tools[0]).toEqual({
      type: 'function',
      function: {
        name: 'get_weather',
        description: weatherTool.description,
        parameters: weatherTool.input_schema,
      },
    });
    expect(lastChat().tool_choice).toBe('required');

    const { events, final } = await streamEvents(client.messages.stream(request));
    expectMessagesGrammar(events);
    expect(events.some((e) => e.delta?.type === 'input_json_delta')).toBe(true);
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content[0]).toMatchObject({ type: 'tool_use', input: { input: 'Weather in Paris?' } });
  });

  it('carries tool use and tool results of earlier turns into the chat history, not the thinking (OpenAI-wire providers refuse it)', async () => {
    await gatewayAnthropic(gateway, openaiTarget()).messages.create({
      model: 'gpt-4o-mini',
      max_tokens: 100,
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'I should call the tool.', signature: 'sig-abc' },
            { type: 'text', text: 'Let me check.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '18°C, sunny' }] },
            { type: 'text', text: 'And tomorrow?' },
          ],
        },
      ],
    });
    expect(lastChat().messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: 'Let me check.',
        tool_calls: [
          {
            id: 'toolu_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: '18°C, sunny' },
      { role: 'user', content: 'And tomorrow?' },
    ]);
  });

  it('answers an OpenAI refusal with the refusal stop reason and its text, streamed and not', async () => {
    const refusal = "I'm sorry, I can't help with that.";
    openai.enqueue({
      status: 200,
      body: {
        id: 'chatcmpl-ref',
        object: 'chat.completion',
        created: 1,
        model: 'gpt-4o',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: null, refusal },
            finish_reason: 'stop',
            logprobs: null,
          },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 8, total_tokens: 18 },
      },
    });
    const request = { model: 'gpt-4o', max_tokens: 100, messages: [{ role: 'user' as const, content: 'x' }] };
    const message = await gatewayAnthropic(gateway, openaiTarget()).messages.create(request);
    expectAnthropicShape('Message', message);
    expect(message.stop_reason).toBe('refusal');
    expect(message.content).toEqual([{ type: 'text', text: refusal }]);

    const chunk = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({
        id: 'chatcmpl-ref',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'gpt-4o',
        choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
      })}\n\n`;
    openai.enqueue({
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body: [
        chunk({ role: 'assistant', content: null, refusal: '' }),
        chunk({ refusal: "I'm sorry, " }),
        chunk({ refusal: "I can't help with that." }),
        chunk({}, 'stop'),
        'data: [DONE]\n\n',
      ].join(''),
    });
    const { events, final } = await streamEvents(
      gatewayAnthropic(gateway, openaiTarget()).messages.stream(request),
    );
    expectMessagesGrammar(events);
    expect(final.stop_reason).toBe('refusal');
    expect(final.content).toEqual([{ type: 'text', text: refusal }]);
  });

  // vLLM says which stop string ended the answer (`stop_reason` beside finish_reason "stop"), SGLang
  // (`matched_stop`) too; Anthropic's answer names it with the stop reason stop_sequence.
  it('answers stop_sequence and the matched sequence where the provider says which stop matched', async () => {
    const target = { provider: 'openai-compatible', custom_host: openai.url };
    const request = {
      model: 'meta-llama/Llama-3.1-8B-Instruct',
      max_tokens: 100,
      stop_sequences: ['</answer>', 'END'],
      messages: [{ role: 'user' as const, content: 'x' }],
    };
    const answer = (choice: object) => ({
      id: 'chatcmpl-vllm',
      object: 'chat.completion',
      created: 1,
      model: request.model,
      choices: [{ index: 0, message: { role: 'assistant', content: '42' }, logprobs: null, ...choice }],
      usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
    });
    openai.enqueue({ status: 200, body: answer({ finish_reason: 'stop', stop_reason: '</answer>' }) });
    const message = await gatewayAnthropic(gateway, target).messages.create(request);
    expectAnthropicShape('Message', message);
    expect(message.stop_reason).toBe('stop_sequence');
    expect(message.stop_sequence).toBe('</answer>');

    openai.enqueue({ status: 200, body: answer({ finish_reason: 'stop', matched_stop: 'END' }) });
    const sglang = await gatewayAnthropic(gateway, target).messages.create(request);
    expect([sglang.stop_reason, sglang.stop_sequence]).toEqual(['stop_sequence', 'END']);

    // The end of sequence token: vLLM's stop_reason is null, a stop token's id a number.
    openai.enqueue({ status: 200, body: answer({ finish_reason: 'stop', stop_reason: null }) });
    const natural = await gatewayAnthropic(gateway, target).messages.create(request);
    expect([natural.stop_reason, natural.stop_sequence]).toEqual(['end_turn', null]);
    openai.enqueue({ status: 200, body: answer({ finish_reason: 'stop', stop_reason: 128009 }) });
    const token = await gatewayAnthropic(gateway, target).messages.create(request);
    expect([token.stop_reason, token.stop_sequence]).toEqual(['end_turn', null]);

    const chunk = (delta: object, choice: object = { finish_reason: null }) =>
      `data: ${JSON.stringify({
        id: 'chatcmpl-vllm',
        object: 'chat.completion.chunk',
        created: 1,
        model: request.model,
        choices: [{ index: 0, delta, logprobs: null, ...choice }],
      })}\n\n`;
    openai.enqueue({
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body: [
        chunk({ role: 'assistant', content: '' }),
        chunk({ content: '42' }, { finish_reason: null, stop_reason: null }),
        chunk({}, { finish_reason: 'stop', stop_reason: '</answer>' }),
        'data: [DONE]\n\n',
      ].join(''),
    });
    const { events, final } = await streamEvents(gatewayAnthropic(gateway, target).messages.stream(request));
    expectMessagesGrammar(events);
    expect((events.find((e) => e.type === 'message_delta') as any).delta).toEqual({
      stop_reason: 'stop_sequence',
      stop_sequence: '</answer>',
    });
    expect([final.stop_reason, final.stop_sequence]).toEqual(['stop_sequence', '</answer>']);
  });

  // OpenAI's chat API has no thinking budget: its reasoning models take reasoning_effort, bucketed from the
  // budget as LiteLLM's Messages adapter does (but for minimal, which o-series and GPT-5.1 models refuse);
  // gpt-4o and the GPT-5 chat models refuse reasoning_effort, and get no reasoning parameter.
  it.each([
    ['openai', 'o3-mini', 1024, 'low'],
    ['openai', 'o1', 4999, 'low'],
    ['openai', 'gpt-5', 5000, 'medium'],
    ['openai', 'gpt-5.1-2025-11-13', 16000, 'high'],
    ['groq', 'openai/gpt-oss-120b', 12000, 'high'],
    ['openai', 'gpt-4o', 16000, undefined],
    ['openai', 'gpt-5-chat-latest', 16000, undefined],
    ['openai', 'o1-mini', 16000, undefined],
  ])(
    'sends thinking to %s %s (budget %d) as reasoning_effort %s',
    async (provider, model, budget, effort) => {
      await gatewayAnthropic(gateway, {
        provider,
        api_key: 'sk-test',
        custom_host: openai.url,
      }).messages.create({
        model,
        max_tokens: 20000,
        thinking: { type: 'enabled', budget_tokens: budget },
        messages: [{ role: 'user', content: 'Think about it' }],
      });
      const sent = lastChat();
      expect(sent.reasoning_effort).toBe(effort);
      expect(sent.thinking).toBeUndefined();
    },
  );

  // Anthropic's effort is the closest of its settings to reasoning_effort; it wins over the budget, as in
  // LiteLLM's Messages adapter. xhigh and max are high, the most every reasoning model takes.
  it.each([
    ['low', undefined, 'low'],
    ['medium', { type: 'enabled', budget_tokens: 16000 }, 'medium'],
    ['max', { type: 'adaptive' }, 'high'],
    ['xhigh', undefined, 'high'],
  ])('sends output_config.effort %s (thinking %j) as reasoning_effort %s', async (effort, thinking, sent) => {
    await gatewayAnthropic(gateway, openaiTarget()).messages.create({
      model: 'gpt-5-mini',
      max_tokens: 20000,
      output_config: { effort },
      ...(thinking ? { thinking } : {}),
      messages: [{ role: 'user', content: 'Think about it' }],
    } as Anthropic.MessageCreateParamsNonStreaming);
    expect(lastChat().reasoning_effort).toBe(sent);
  });

  it('sends no reasoning_effort for an effort to a model that takes none', async () => {
    await gatewayAnthropic(gateway, openaiTarget()).messages.create({
      model: 'gpt-4.1',
      max_tokens: 200,
      output_config: { effort: 'low' },
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(lastChat().reasoning_effort).toBeUndefined();
  });

  it('sends thinking as it is to a server that takes it (openai-compatible)', async () => {
    await gatewayAnthropic(gateway, {
      provider: 'openai-compatible',
      custom_host: openai.url,
    }).messages.create({
      model: 'gpt-5',
      max_tokens: 20000,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      messages: [{ role: 'user', content: 'Think about it' }],
    });
    expect(lastChat().thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(lastChat().reasoning_effort).toBeUndefined();
  });

  // DeepSeek (and xAI, vLLM) answer their reasoning as reasoning_content, Groq as reasoning: Anthropic's
  // thinking blocks, before the text, as a Claude answer with thinking has them — to a request that enabled
  // thinking. These models reason whatever is asked; Anthropic answers thinking blocks only when thinking
  // is on, and a client that did not turn it on reads the text as the first block.
  function recordedReasoning(provider: string, fixture: string) {
    const read = (name: string) => readFileSync(path.join(providerFixturesDir(provider), '..', name), 'utf8');
    const recorded = JSON.parse(read(`${fixture}.json`));
    const lines = read(`${fixture}.chunks.txt`)
      .split('\n')
      .filter((line) => line.trim() !== '');
    return {
      recorded,
      deltas: lines.map((line) => JSON.parse(line).choices[0]?.delta ?? {}),
      target: { provider, api_key: 'sk-test', custom_host: openai.url },
      request: {
        model: recorded.model,
        max_tokens: 2000,
        messages: [{ role: 'user' as const, content: 'How many r are in strawberry?' }],
      },
      enqueueStream: () =>
        openai.enqueue({
          status: 200,
          headers: { 'content-type': 'text/event-stream' },
          body: lines.map((line) => `data: ${line}\n\n`).join('') + 'data: [DONE]\n\n',
        }),
    };
  }

  it.each([
    [
      'deepseek',
      'deepseek/chat/deepseek-reasoning',
      'reasoning_content',
      { type: 'enabled', budget_tokens: 1024 },
    ],
    ['groq', 'groq/groq-reasoning', 'reasoning', { type: 'adaptive' }],
  ])(
    'answers %s reasoning as a thinking block, streamed and not, when thinking is on',
    async (provider, fixture, field, thinking) => {
      const { recorded, deltas, target, request, enqueueStream } = recordedReasoning(provider, fixture);
      const asked = { ...request, thinking } as Anthropic.MessageCreateParamsNonStreaming;
      openai.enqueue({ status: 200, body: recorded });
      const message = await gatewayAnthropic(gateway, target).messages.create(asked);
      expectAnthropicShape('Message', message);
      expect(message.content).toEqual([
        { type: 'thinking', thinking: recorded.choices[0].message[field], signature: '' },
        { type: 'text', text: recorded.choices[0].message.content },
      ]);

      enqueueStream();
      const { events, final } = await streamEvents(gatewayAnthropic(gateway, target).messages.stream(asked));
      expectMessagesGrammar(events);
      expect(final.content).toEqual([
        { type: 'thinking', thinking: deltas.map((d) => d[field] ?? '').join(''), signature: '' },
        { type: 'text', text: deltas.map((d) => d.content ?? '').join('') },
      ]);
      const thinkingDeltas = events.filter(
        (e) => e.type === 'content_block_delta' && (e as any).delta.type === 'thinking_delta',
      );
      expect(thinkingDeltas.length).toBeGreaterThan(1);
    },
  );

  it.each([
    ['deepseek', undefined, 'deepseek/chat/deepseek-reasoning'],
    ['deepseek', { type: 'disabled' }, 'deepseek/chat/deepseek-reasoning'],
    ['groq', undefined, 'groq/groq-reasoning'],
  ])(
    'leaves %s reasoning out, streamed and not, when thinking is %j',
    async (provider, thinking, fixture) => {
      const { recorded, deltas, target, request, enqueueStream } = recordedReasoning(provider, fixture);
      const asked = {
        ...request,
        ...(thinking ? { thinking } : {}),
      } as Anthropic.MessageCreateParamsNonStreaming;
      openai.enqueue({ status: 200, body: recorded });
      const message = await gatewayAnthropic(gateway, target).messages.create(asked);
      expectAnthropicShape('Message', message);
      expect(message.content).toEqual([{ type: 'text', text: recorded.choices[0].message.content }]);
      // The reasoning was spent: its tokens are in output_tokens, as the provider counted them.
      expect(message.usage.output_tokens).toBe(recorded.usage.completion_tokens);

      enqueueStream();
      const { events, final } = await streamEvents(gatewayAnthropic(gateway, target).messages.stream(asked));
      expectMessagesGrammar(events);
      expect(final.content).toEqual([{ type: 'text', text: deltas.map((d) => d.content ?? '').join('') }]);
      const blockEvents = events.filter((e) => e.type.startsWith('content_block_'));
      expect(new Set(blockEvents.map((e) => (e as any).index))).toEqual(new Set([0]));
      expect(blockEvents.some((e) => (e as any).delta?.type === 'thinking_delta')).toBe(false);
    },
  );

  it('sends a PDF document as a file part', async () => {
    const message = await gatewayAnthropic(gateway, openaiTarget()).messages.create({
      model: 'gpt-4o-mini',
      max_tokens: 100,
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'document',
              title: 'q3.pdf',
              source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' },
            },
            { type: 'text', text: 'Summarise it.' },
          ],
        },
      ],
    });
    expectAnthropicShape('Message', message);
    expect(lastChat().messages[0].content).toEqual([
      { type: 'file', file: { filename: 'q3.pdf', file_data: 'data:application/pdf;base64,JVBERi0xLjQK' } },
      { type: 'text', text: 'Summarise it.' },
    ]);
  });

  it('refuses a block the chat API cannot carry, naming it', async () => {
    const error = await gatewayAnthropic(gateway, openaiTarget())
      .messages.create({
        model: 'gpt-4o-mini',
        max_tokens: 100,
        messages: [
          {
            role: 'user',
            content: [
              {
                type: 'search_result',
                source: 'https://example.com',
                title: 'Example',
                content: [{ type: 'text', text: 'x' }],
              },
            ],
          },
        ],
      })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    const body = (error as any).error;
    expectAnthropicShape('ErrorResponse', body);
    expect(body.error.message).toContain('messages[0].content[0].type');
  });

  it('refuses a tool_choice naming no tool of tools, as Anthropic does, before any call', async () => {
    // The chat request would force a function the model was never offered: an OpenAI-wire server may
    // answer a call of it, or ignore the choice.
    const before = openai.requests.length;
    const error = await gatewayAnthropic(gateway, openaiTarget())
      .messages.create({
        model: 'gpt-4o-mini',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'What time is it in Paris?' }],
        tools: [weatherTool],
        tool_choice: { type: 'tool', name: 'get_time' },
      })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    const body = (error as any).error;
    expectAnthropicShape('ErrorResponse', body);
    expect(body.error.message).toContain('tool_choice.name');
    expect(body.error.message).toContain('get_time');
    expect(openai.requests.length).toBe(before);
  });

  it('estimates count_tokens in Anthropic shape', async () => {
    const body = {
      model: 'gpt-4o-mini',
      system: 'You are a helpful assistant.',
      messages: [{ role: 'user' as const, content: 'Count the tokens of this sentence, please.' }],
      tools: [weatherTool],
    };
    const before = openai.requests.length;
    const counted = await gatewayAnthropic(gateway, openaiTarget()).messages.countTokens(body);
    expectAnthropicShape('CountTokensResponse', counted);
    expect(counted.input_tokens).toBe(await estimateInputTokens(body));
    // The sentences and the tool definition are some dozens of tokens: an estimate in that range.
    expect(counted.input_tokens).toBeGreaterThan(30);
    expect(counted.input_tokens).toBeLessThan(120);
    expect(openai.requests.length).toBe(before);
  });
});

describe('stop_sequences', () => {
  const FIVE = ['one', 'two', 'three', 'four', 'five'];

  it('refuses more than the target takes, naming stop_sequences, before any call', async () => {
    const calls = openai.requests.length;
    const error = await gatewayAnthropic(gateway, openaiTarget())
      .messages.create({
        model: 'gpt-4o-mini',
        max_tokens: 100,
        stop_sequences: FIVE,
        messages: [{ role: 'user', content: 'Count' }],
      })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(JSON.stringify((error as any).error)).toContain('stop_sequences');
    expect(openai.requests.length).toBe(calls);
  });

  it('sends as many as a target whose bound is larger takes (Gemini: 5)', async () => {
    google.enqueue({ fixture: 'google-text.json' });
    const message = await gatewayAnthropic(gateway, googleTarget()).messages.create({
      model: 'gemini-2.5-flash',
      max_tokens: 500,
      stop_sequences: FIVE,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expectAnthropicShape('Message', message);
    expect((google.requests.at(-1)!.body as any).generationConfig.stopSequences).toEqual(FIVE);
  });

  it("refuses more than Gemini's 5, naming stop_sequences, before any call", async () => {
    const calls = google.requests.length;
    const error = await gatewayAnthropic(gateway, googleTarget())
      .messages.create({
        model: 'gemini-2.5-flash',
        max_tokens: 500,
        stop_sequences: [...FIVE, 'six'],
        messages: [{ role: 'user', content: 'Hello' }],
      })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as any).error.error.message).toContain('stop_sequences');
    expect((error as any).error.error.message).toContain('at most 5');
    expect(google.requests.length).toBe(calls);
  });
});

describe('Gemini', () => {
  it('answers messages.create from the recorded answer', async () => {
    const recorded = readGoogleFixture('google-text.json') as any;
    google.enqueue({ fixture: 'google-text.json' });
    const message = await gatewayAnthropic(gateway, googleTarget()).messages.create({
      model: 'gemini-2.5-flash',
      max_tokens: 500,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expectAnthropicShape('Message', message);
    const text = message.content.find((block) => block.type === 'text') as { text: string };
    expect(text.text).toBe(recorded.candidates[0].content.parts[0].text);
    expect(message.usage.input_tokens).toBe(recorded.usageMetadata.promptTokenCount);
    const sent = google.requests.at(-1)!;
    expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect((sent.body as any).contents).toEqual([{ role: 'user', parts: [{ text: 'Hello' }] }]);
  });

  it('streams the recorded answer in Anthropic grammar', async () => {
    const lines = readGoogleStream('google-text.chunks.txt').map((line) => JSON.parse(line));
    const expected = lines
      .flatMap((chunk) => chunk.candidates?.[0]?.content?.parts ?? [])
      .map((part: { text?: string; thought?: boolean }) => (part.thought ? '' : (part.text ?? '')))
      .join('');
    google.enqueue({ fixture: 'google-text.chunks.txt' });
    const { events, final } = await streamEvents(
      gatewayAnthropic(gateway, googleTarget()).messages.stream({
        model: 'gemini-2.5-flash',
        max_tokens: 500,
        messages: [{ role: 'user', content: 'Hello' }],
      }),
    );
    expectMessagesGrammar(events);
    const text = (final.content as Array<{ type: string; text?: string }>)
      .filter((block) => block.type === 'text')
      .map((block) => block.text)
      .join('');
    expect(text).toBe(expected);
  });

  it("keeps Gemini's thought signature across turns through a thinking block, when thinking is on", async () => {
    const recorded = readGoogleFixture('google-tool-call.json') as any;
    const signature = recorded.candidates[0].content.parts[0].thoughtSignature;
    google.enqueue({ fixture: 'google-tool-call.json' });
    const client = gatewayAnthropic(gateway, googleTarget());
    const question = { role: 'user' as const, content: 'Weather in San Francisco?' };
    const first = await client.messages.create({
      model: 'gemini-3-pro-preview',
      max_tokens: 2000,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tools: [{ ...weatherTool, name: 'weather' }],
      messages: [question],
    });
    expectAnthropicShape('Message', first);
    expect(first.stop_reason).toBe('tool_use');
    const thinking = first.content.find((block) => block.type === 'thinking') as { signature: string };
    expect(thinking.signature).toBe(signature);
    const toolUse = first.content.find((block) => block.type === 'tool_use') as {
      id: string;
      input: unknown;
    };
    expect(toolUse.input).toEqual({ location: 'San Francisco' });

    google.enqueue({ fixture: 'google-text.json' });
    await client.messages.create({
      model: 'gemini-3-pro-preview',
      max_tokens: 2000,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tools: [{ ...weatherTool, name: 'weather' }],
      messages: [
        question,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: 'Foggy, 14°C' }] },
      ],
    });
    const contents = (google.requests.at(-1)!.body as any).contents;
    expect(contents[1].parts[0]).toMatchObject({
      functionCall: { name: 'weather', args: { location: 'San Francisco' } },
      thoughtSignature: signature,
    });
  });

  // Gemini 3 signs a function call whether thinking was asked for or not; Anthropic answers no thinking
  // block to a request without thinking, so the call has none, and its turn goes back with Google's
  // placeholder signature.
  it('answers a signed function call with no thinking block when thinking is off, streamed and not', async () => {
    const recorded = readGoogleFixture('google-tool-call.json') as any;
    const client = gatewayAnthropic(gateway, googleTarget());
    const question = { role: 'user' as const, content: 'Weather in San Francisco?' };
    const request = {
      model: 'gemini-3-pro-preview',
      max_tokens: 500,
      tools: [{ ...weatherTool, name: 'weather' }],
      messages: [question],
    };
    google.enqueue({ fixture: 'google-tool-call.json' });
    const first = await client.messages.create(request);
    expectAnthropicShape('Message', first);
    expect(first.content.map((block) => block.type)).toEqual(['tool_use']);
    expect(first.stop_reason).toBe('tool_use');

    google.enqueue({
      events: [
        {
          candidates: [
            { content: { role: 'model', parts: [{ text: 'Let me look.', thought: true }] }, index: 0 },
          ],
          responseId: 'r0',
        },
        {
          candidates: [{ ...recorded.candidates[0], index: 0 }],
          usageMetadata: recorded.usageMetadata,
          responseId: 'r0',
        },
      ],
    });
    const { events, final } = await streamEvents(client.messages.stream(request));
    expectMessagesGrammar(events);
    expect(final.content.map((block: Anthropic.ContentBlock) => block.type)).toEqual(['tool_use']);
    const blockEvents = events.filter((e) => e.type.startsWith('content_block_'));
    expect(new Set(blockEvents.map((e) => (e as any).index))).toEqual(new Set([0]));

    const toolUse = first.content[0] as Anthropic.ToolUseBlock;
    google.enqueue({ fixture: 'google-text.json' });
    await client.messages.create({
      ...request,
      messages: [
        question,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: 'Foggy, 14°C' }] },
      ],
    });
    const contents = (google.requests.at(-1)!.body as any).contents;
    expect(contents[1].parts[0].thoughtSignature).toBe('skip_thought_signature_validator');
  });
});

describe('Gemini with thought summaries', () => {
  const SIG = 'REAL-SIGNATURE-abc123';
  const tool = { ...weatherTool, name: 'weather' };
  const usageMetadata = {
    promptTokenCount: 10,
    candidatesTokenCount: 5,
    totalTokenCount: 40,
    thoughtsTokenCount: 25,
  };
  const call = { functionCall: { name: 'weather', args: { city: 'SF' } }, thoughtSignature: SIG };
  const request = (messages: Anthropic.MessageParam[]) => ({
    model: 'gemini-2.5-pro',
    max_tokens: 3000,
    thinking: { type: 'enabled' as const, budget_tokens: 1024 },
    tools: [tool],
    messages,
  });
  const question = { role: 'user' as const, content: 'Weather in SF?' };

  async function sentBack(first: Anthropic.Message) {
    const toolUse = first.content.find((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock;
    google.enqueue({ fixture: 'google-text.json' });
    await gatewayAnthropic(gateway, googleTarget()).messages.create(
      request([
        question,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: 'Foggy' }] },
      ]),
    );
    return (google.requests.at(-1)!.body as any).contents[1].parts as any[];
  }

  it('sends the signature back with the function call (JSON answer)', async () => {
    google.enqueue({
      json: {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [
                { text: 'First thought.', thought: true },
                { text: 'Second thought.', thought: true },
                call,
              ],
            },
            finishReason: 'STOP',
            index: 0,
          },
        ],
        usageMetadata,
        modelVersion: 'gemini-2.5-pro',
        responseId: 'r1',
      },
    });
    const first = await gatewayAnthropic(gateway, googleTarget()).messages.create(request([question]));
    const parts = await sentBack(first);
    expect(parts.find((p) => p.functionCall).thoughtSignature).toBe(SIG);
  });

  it('streams the signature inside the thinking block, before the tool_use', async () => {
    google.enqueue({
      events: [
        {
          candidates: [
            { content: { role: 'model', parts: [{ text: 'Thinking...', thought: true }] }, index: 0 },
          ],
          responseId: 'r2',
        },
        {
          candidates: [{ content: { role: 'model', parts: [call] }, finishReason: 'STOP', index: 0 }],
          usageMetadata,
          responseId: 'r2',
        },
      ],
    });
    const { events, final } = await streamEvents(
      gatewayAnthropic(gateway, googleTarget()).messages.stream(request([question])),
    );
    expectMessagesGrammar(events);
    expect(final.content.map((b: Anthropic.ContentBlock) => b.type)).toEqual(['thinking', 'tool_use']);
    expect(final.content[0]).toMatchObject({ thinking: 'Thinking...', signature: SIG });
    const parts = await sentBack(final);
    expect(parts.find((p) => p.functionCall).thoughtSignature).toBe(SIG);
  });
});

describe('a fallback from Anthropic to an OpenAI-wire provider', () => {
  const fallback = () => ({
    strategy: { mode: 'fallback' },
    targets: [{ provider: 'anthropic', api_key: ANTHROPIC_KEY, custom_host: anthropic.url }, openaiTarget()],
  });

  it('answers from the second provider in the same call, translated', async () => {
    anthropic.enqueue({ kind: 'error', status: 529, type: 'overloaded_error', message: 'Overloaded' });
    const { traceId, headers } = traceHeaders();
    const response = await gatewayAnthropic(gateway, fallback(), headers)
      .messages.create({
        model: 'claude-opus-5',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'Who answers?' }],
      })
      .withResponse();
    expectAnthropicShape('Message', response.data);
    expect(response.data.content).toEqual([{ type: 'text', text: '[upstream] Who answers?' }]);
    expect(response.response.headers.get('x-gateway-provider')).toBe('openai');
    expect(anthropic.requests.at(-1)!.body.messages).toEqual([{ role: 'user', content: 'Who answers?' }]);
    expect(lastChat().model).toBe('claude-opus-5');
    const records = await logsOf(gateway, traceId, 3);
    expect(records.map((record) => record.provider).sort()).toEqual(['anthropic', 'openai', 'openai']);
  });

  it('streams from the second provider when the first fails before its first byte', async () => {
    anthropic.enqueue({ kind: 'error', status: 500, type: 'api_error', message: 'Internal error' });
    const { events, final } = await streamEvents(
      gatewayAnthropic(gateway, fallback()).messages.stream({
        model: 'claude-opus-5',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'Stream from whoever' }],
      }),
    );
    expectMessagesGrammar(events);
    expect(final.content).toEqual([{ type: 'text', text: '[upstream] Stream from whoever' }]);
  });
});
