/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// Reasoning across turns on translated providers: Claude's redacted thinking is kept as a reasoning item
// (its data in encrypted_content) and sent back as redacted_thinking on the next turn, streamed or not;
// `reasoning.effort` reaches an OpenAI-wire chat provider as `reasoning_effort`. The openai SDK against the
// gateway; Anthropic's and an OpenAI-compatible provider's fakes.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { accumulateResponse } from 'openai/lib/responses/ResponseAccumulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { providerFixturesDir } from '../fakes/cohere/fixtures.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';

const ANTHROPIC_KEY = 'sk-ant-reasoning';

let gateway: TestGateway;
let anthropic: FakeAnthropic;
let compatible: FakeUpstream;

beforeAll(async () => {
  [gateway, anthropic, compatible] = await Promise.all([
    startGateway(),
    startFakeAnthropic({ apiKey: ANTHROPIC_KEY }),
    startFakeOpenAI({ name: 'compat' }),
  ]);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), anthropic?.close(), compatible?.close()]);
});

const claude = () =>
  gatewayOpenAI(gateway, { provider: 'anthropic', api_key: ANTHROPIC_KEY, custom_host: anthropic.url });

const THINKING = { type: 'thinking', thinking: 'Let me think.', signature: 'sig-thinking' };
const REDACTED = {
  type: 'redacted_thinking',
  data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP',
};

const message = (text: string) => ({
  id: 'msg_01redacted',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [THINKING, REDACTED, { type: 'text', text }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 10, output_tokens: 20 },
});

/** The stream's text block at `index` and its end: message_delta and message_stop. */
const textThenStop = (index: number, text: string) => [
  { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index, delta: { type: 'text_delta', text } },
  { type: 'content_block_stop', index },
  {
    type: 'message_delta',
    delta: { stop_reason: 'end_turn', stop_sequence: null },
    usage: { output_tokens: 20 },
  },
  { type: 'message_stop' },
];

function streamOf(text: string): Array<Record<string, unknown>> {
  return [
    { type: 'message_start', message: { ...message(''), content: [], stop_reason: null } },
    {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'thinking', thinking: '', signature: '' },
    },
    { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: THINKING.thinking } },
    {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'signature_delta', signature: THINKING.signature },
    },
    { type: 'content_block_stop', index: 0 },
    { type: 'content_block_start', index: 1, content_block: REDACTED },
    { type: 'content_block_stop', index: 1 },
    ...textThenStop(2, text),
  ];
}

describe('Claude’s redacted thinking', () => {
  it('is kept as a reasoning item and sent back as redacted_thinking on the next turn', async () => {
    const client = claude();
    anthropic.enqueue({ kind: 'json', body: message('First answer') });
    const first = await client.responses.create({
      model: 'claude-sonnet-4-5',
      input: 'Think hard',
      reasoning: { effort: 'low' },
    });
    expectOpenAPIValid('Response', first);
    expect(first.output.map((item) => item.type)).toEqual(['reasoning', 'reasoning', 'message']);
    expect(first.output[1]).toMatchObject({ content: [], encrypted_content: REDACTED.data });

    anthropic.enqueue({ kind: 'stream', events: streamOf('Second answer') });
    const events: any[] = [];
    for await (const event of await client.responses.create({
      model: 'claude-sonnet-4-5',
      previous_response_id: first.id,
      input: 'Again',
      reasoning: { effort: 'low' },
      stream: true,
    })) {
      expectOpenAPIValid('ResponseStreamEvent', event);
      events.push(event);
    }
    const claudeSaw = anthropic.requests.at(-1)!.body as any;
    expect(claudeSaw.messages[1]).toEqual({
      role: 'assistant',
      content: [THINKING, REDACTED, { type: 'text', text: 'First answer' }],
    });
    const second = events.at(-1).response;
    expect(events.at(-1).type).toBe('response.completed');
    expect(second.output.map((item: any) => item.type)).toEqual(['reasoning', 'reasoning', 'message']);
    expect(second.output[1]).toMatchObject({ content: [], encrypted_content: REDACTED.data });

    anthropic.enqueue({ kind: 'json', body: message('Third answer') });
    await client.responses.create({
      model: 'claude-sonnet-4-5',
      previous_response_id: second.id,
      input: 'Once more',
    });
    const messages = (anthropic.requests.at(-1)!.body as any).messages;
    expect(messages[3]).toEqual({
      role: 'assistant',
      content: [THINKING, REDACTED, { type: 'text', text: 'Second answer' }],
    });
  });
});

// Claude may think in several blocks, each signed apart (interleaved thinking between tool calls, or two in a
// row): each is its own reasoning item, whose signature goes back with its own text.
describe('consecutive thinking blocks', () => {
  const SECOND = { type: 'thinking', thinking: 'And then some more.', signature: 'sig-second' };
  const twoThoughts = (text: string) => ({
    ...message(text),
    content: [THINKING, SECOND, { type: 'text', text }],
  });
  function thinkingEvents(index: number, block: typeof THINKING): Array<Record<string, unknown>> {
    return [
      {
        type: 'content_block_start',
        index,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      },
      { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: block.thinking } },
      { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } },
      { type: 'content_block_stop', index },
    ];
  }
  const twoThoughtsStreamed = (text: string) => [
    { type: 'message_start', message: { ...message(''), content: [], stop_reason: null } },
    ...thinkingEvents(0, THINKING),
    ...thinkingEvents(1, SECOND),
    ...textThenStop(2, text),
  ];
  const items = [
    {
      type: 'reasoning',
      content: [{ type: 'reasoning_text', text: THINKING.thinking }],
      encrypted_content: THINKING.signature,
    },
    {
      type: 'reasoning',
      content: [{ type: 'reasoning_text', text: SECOND.thinking }],
      encrypted_content: SECOND.signature,
    },
  ];

  it('are a reasoning item each, streamed and whole, and go back as they came', async () => {
    const client = claude();
    anthropic.enqueue({ kind: 'stream', events: twoThoughtsStreamed('First answer') });
    const stream = client.responses.stream({
      model: 'claude-sonnet-4-5',
      input: 'Think twice',
      reasoning: { effort: 'low' },
    });
    const added: any[] = [];
    for await (const event of stream) {
      expectOpenAPIValid('ResponseStreamEvent', event);
      if (event.type === 'response.output_item.added') added.push(event.item);
    }
    const streamed = await stream.finalResponse();
    expect(added.map((item) => item.type)).toEqual(['reasoning', 'reasoning', 'message']);
    expect(streamed.output.map((item) => item.type)).toEqual(['reasoning', 'reasoning', 'message']);
    expect(streamed.output.slice(0, 2)).toMatchObject(items);
    expect((await client.responses.retrieve(streamed.id)).output.slice(0, 2)).toMatchObject(items);

    anthropic.enqueue({ kind: 'json', body: twoThoughts('Second answer') });
    const whole = await client.responses.create({
      model: 'claude-sonnet-4-5',
      previous_response_id: streamed.id,
      input: 'Again',
      reasoning: { effort: 'low' },
    });
    expect(whole.output.slice(0, 2)).toMatchObject(items);
    const claudeSaw = anthropic.requests.at(-1)!.body as any;
    expect(claudeSaw.messages[1]).toEqual({
      role: 'assistant',
      content: [THINKING, SECOND, { type: 'text', text: 'First answer' }],
    });

    anthropic.enqueue({ kind: 'json', body: message('Third answer') });
    await client.responses.create({
      model: 'claude-sonnet-4-5',
      previous_response_id: whole.id,
      input: 'More',
    });
    expect((anthropic.requests.at(-1)!.body as any).messages[3]).toEqual({
      role: 'assistant',
      content: [THINKING, SECOND, { type: 'text', text: 'Second answer' }],
    });
  });
});

describe('the Response’s reasoning settings', () => {
  // The spec lists the Response's reasoning as `effort` and `generate_summary`; OpenAI's document also has
  // `summary`, the newer name of the same setting. Either name in the request shows under both.
  it.each([
    ['generate_summary', { effort: 'low', generate_summary: 'concise' }],
    ['summary', { effort: 'low', summary: 'concise' }],
  ] as const)('show the summary asked by %s under both names', async (_name, reasoning) => {
    const client = gatewayOpenAI(gateway, {
      provider: 'groq',
      api_key: 'gsk-test',
      custom_host: compatible.url,
    });
    const response = await client.responses.create({ model: 'o4-mini', input: 'Reason', reasoning });
    expectOpenAPIValid('Response', response);
    expect(response.reasoning).toEqual({ effort: 'low', summary: 'concise', generate_summary: 'concise' });
  });
});

describe('reasoning.effort on an OpenAI-wire chat provider without thinking', () => {
  it('is sent as reasoning_effort, not as the gateway’s thinking option', async () => {
    const client = gatewayOpenAI(gateway, {
      provider: 'groq',
      api_key: 'gsk-test',
      custom_host: compatible.url,
    });
    await client.responses.create({ model: 'o4-mini', input: 'Reason', reasoning: { effort: 'high' } });
    const sent = compatible.requests.at(-1)!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.body).toMatchObject({ reasoning_effort: 'high' });
    expect(sent.body).not.toHaveProperty('thinking');
  });
});

describe('reasoning.summary on a translated provider', () => {
  const thinkingOnly = (text: string) => ({
    ...message(text),
    content: [THINKING, { type: 'text', text }],
  });
  const summary = [{ type: 'summary_text', text: THINKING.thinking }];

  it('shows the provider’s thinking as the reasoning item’s summary, beside its content', async () => {
    const client = claude();
    anthropic.enqueue({ kind: 'json', body: thinkingOnly('Answer') });
    const response = await client.responses.create({
      model: 'claude-sonnet-4-5',
      input: 'Think',
      reasoning: { effort: 'low', summary: 'auto' },
    });
    expectOpenAPIValid('Response', response);
    expect(response.reasoning).toMatchObject({ summary: 'auto' });
    expect(response.output[0]).toMatchObject({
      type: 'reasoning',
      summary,
      content: [{ type: 'reasoning_text', text: THINKING.thinking }],
      encrypted_content: THINKING.signature,
    });

    anthropic.enqueue({ kind: 'json', body: thinkingOnly('Answer') });
    const unasked = await client.responses.create({
      model: 'claude-sonnet-4-5',
      input: 'Think',
      reasoning: { effort: 'low' },
    });
    expect(unasked.output[0]).toMatchObject({ type: 'reasoning', summary: [] });
  });

  it('streams the summary with the events the SDK builds it from', async () => {
    const client = claude();
    const events = streamOf('Answer').filter(
      (event: any) => event.index !== 1 || event.type === 'message_delta',
    );
    anthropic.enqueue({ kind: 'stream', events });
    const stream = client.responses.stream({
      model: 'claude-sonnet-4-5',
      input: 'Think',
      reasoning: { effort: 'low', summary: 'detailed' },
    });
    const seen: any[] = [];
    let snapshot: any;
    let summaryBeforeDone: unknown;
    for await (const event of stream) {
      expectOpenAPIValid('ResponseStreamEvent', event);
      seen.push(event);
      snapshot = accumulateResponse(event, snapshot);
      if (event.type === 'response.reasoning_summary_part.done') {
        summaryBeforeDone = structuredClone(snapshot.output[0].summary);
      }
    }
    const final = await stream.finalResponse();
    const types = seen.map((e) => e.type).filter((type) => type.startsWith('response.reasoning_summary'));
    expect(types).toEqual([
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
    ]);
    expect(seen.find((e) => e.type === 'response.reasoning_summary_text.done')).toMatchObject({
      output_index: 0,
      summary_index: 0,
      text: THINKING.thinking,
    });
    // The SDK's snapshot, built from the events, holds the summary before the item is done.
    expect(summaryBeforeDone).toEqual(summary);
    expect(final.output[0]).toMatchObject({ type: 'reasoning', summary });
    const stored = await client.responses.retrieve(final.id);
    expect(stored.output[0]).toMatchObject({ summary });
  });
});

describe('an OpenAI-wire provider’s reasoning field (DeepSeek’s reasoning_content, Groq’s reasoning)', () => {
  function recorded(provider: string, fixture: string) {
    const read = (name: string) => readFileSync(path.join(providerFixturesDir(provider), '..', name), 'utf8');
    const lines = read(`${fixture}.chunks.txt`)
      .split('\n')
      .filter((line) => line.trim() !== '');
    return {
      body: JSON.parse(read(`${fixture}.json`)),
      deltas: lines.map((line) => JSON.parse(line).choices[0]?.delta ?? {}),
      enqueueStream: () =>
        compatible.enqueue({
          status: 200,
          headers: { 'content-type': 'text/event-stream' },
          body: lines.map((line) => `data: ${line}\n\n`).join('') + 'data: [DONE]\n\n',
        }),
    };
  }

  it.each([
    ['deepseek', 'deepseek/chat/deepseek-reasoning', 'reasoning_content'],
    ['groq', 'groq/groq-reasoning', 'reasoning'],
  ])(
    'is a reasoning item of %s, its summary when asked, streamed and not',
    async (provider, fixture, field) => {
      const { body, deltas, enqueueStream } = recorded(provider, fixture);
      const client = gatewayOpenAI(gateway, { provider, api_key: 'sk-test', custom_host: compatible.url });
      const request = {
        model: body.model,
        input: 'How many r are in strawberry?',
        reasoning: { summary: 'auto' as const },
      };
      compatible.enqueue({ status: 200, body });
      const response = await client.responses.create(request);
      expectOpenAPIValid('Response', response);
      const thinking = body.choices[0].message[field];
      expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
      expect(response.output[0]).toMatchObject({
        content: [{ type: 'reasoning_text', text: thinking }],
        summary: [{ type: 'summary_text', text: thinking }],
      });
      expect(response.output_text).toBe(body.choices[0].message.content);

      enqueueStream();
      const events: any[] = [];
      for await (const event of await client.responses.create({ ...request, stream: true })) {
        expectOpenAPIValid('ResponseStreamEvent', event);
        events.push(event);
      }
      const streamed = deltas.map((d) => d[field] ?? '').join('');
      const final = events.at(-1).response;
      expect(final.output[0]).toMatchObject({
        type: 'reasoning',
        content: [{ type: 'reasoning_text', text: streamed }],
        summary: [{ type: 'summary_text', text: streamed }],
      });
      expect(events.filter((e) => e.type === 'response.reasoning_summary_text.delta').length).toBeGreaterThan(
        1,
      );
    },
  );
});
