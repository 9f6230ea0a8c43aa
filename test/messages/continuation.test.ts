/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// An Anthropic Messages stream that breaks mid-way, under a fallback config: a translated stream is
// continued on the next target (as chat, whatever that target is: OpenAI-wire, Gemini, or Anthropic itself)
// and the client reads one coherent Anthropic event stream; a native stream is not continued and ends with
// `event: error`. The official @anthropic-ai/sdk against the gateway and fakes that cut their streams.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CONTINUE_INSTRUCTION } from '../../src/gateway/routing/continuation.js';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { startFakeGoogle, type FakeGoogle } from '../fakes/google/server.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectMessagesGrammar, postRawSse, type StreamEvent } from './anthropic-shapes.js';
import { gatewayAnthropic } from '../helpers/anthropic-client.js';
import { anthropicTextEvents } from '../fakes/anthropic/text-events.js';

const ANTHROPIC_KEY = 'sk-ant-continuation';

let gateway: TestGateway;
let first: FakeUpstream;
let second: FakeUpstream;
let google: FakeGoogle;
let anthropic: FakeAnthropic;

beforeAll(async () => {
  [gateway, first, second, google, anthropic] = await Promise.all([
    startGateway(),
    startFakeOpenAI({ name: 'first' }),
    startFakeOpenAI({ name: 'second' }),
    startFakeGoogle(),
    startFakeAnthropic({ apiKey: ANTHROPIC_KEY }),
  ]);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), first?.close(), second?.close(), google?.close(), anthropic?.close()]);
});

beforeEach(() => {
  first.reset();
  second.reset();
  google.requests.length = 0;
  anthropic.requests.length = 0;
});

// OpenAI has no Messages API: it is called translated, on the fake's chat completions.
const translatedTarget = (fake: FakeUpstream) => ({
  provider: 'openai',
  api_key: 'sk-test',
  custom_host: fake.url,
});
const googleTarget = () => ({ provider: 'google', api_key: google.apiKey, custom_host: google.url });
const anthropicTarget = () => ({ provider: 'anthropic', api_key: ANTHROPIC_KEY, custom_host: anthropic.url });
const fallback = (...targets: Record<string, unknown>[]) => ({ strategy: { mode: 'fallback' }, targets });

const WHOLE = 'Once upon a time there was a gateway that kept every stream whole';
// The fake's first event is the role chunk, then one word per chunk: six events carry five words.
const SENT = 'Once upon a time there';
const REST = WHOLE.slice(SENT.length);

const REQUEST = {
  model: 'claude-opus-5',
  max_tokens: 256,
  messages: [{ role: 'user' as const, content: 'Tell me a story' }],
};

async function streamed(stream: ReturnType<Anthropic['messages']['stream']>) {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event as unknown as StreamEvent);
  return { events, final: await stream.finalMessage() };
}

const textOf = (events: readonly StreamEvent[]) =>
  events
    .filter((e) => e.type === 'content_block_delta' && e.delta?.type === 'text_delta')
    .map((e) => (e.delta as { text: string }).text)
    .join('');

/** One Message in Anthropic's grammar, with one text block that carries the whole text. */
function expectOneMessage(events: readonly StreamEvent[], final: Anthropic.Message): void {
  expectMessagesGrammar(events);
  expect(events.filter((e) => e.type === 'content_block_start')).toHaveLength(1);
  expect(events.filter((e) => e.type === 'message_stop')).toHaveLength(1);
  expect(textOf(events)).toBe(WHOLE);
  expect(final.content).toHaveLength(1);
  expect(final.content[0]).toMatchObject({ type: 'text', text: WHOLE });
  expect(final.stop_reason).toBe('end_turn');
}

/** Gemini's stream, one event per word: what a Gemini target answers when asked for the rest. */
function geminiEvents(text: string): unknown[] {
  const words = text.match(/\s*\S+/g) ?? [];
  return words.map((word, i) => ({
    candidates: [
      {
        content: { parts: [{ text: word }], role: 'model' },
        index: 0,
        ...(i === words.length - 1 ? { finishReason: 'STOP' } : {}),
      },
    ],
    usageMetadata: { promptTokenCount: 20, candidatesTokenCount: i + 1, totalTokenCount: 21 + i },
    modelVersion: 'gemini-2.5-flash',
    responseId: 'continued',
  }));
}

/** Anthropic's stream of one text block, one event per word. */
function anthropicEvents(text: string): Array<Record<string, unknown>> {
  return anthropicTextEvents(text, { id: 'msg_continued', model: 'claude-opus-5', inputTokens: 20 });
}

describe('a broken translated Messages stream under a fallback config', () => {
  it('is continued on the next OpenAI-wire target: one message, one text block, the text once', async () => {
    first.enqueue({ text: WHOLE, cutAfter: 6 });
    second.enqueue({ text: REST });
    const { events, final } = await streamed(
      gatewayAnthropic(gateway, fallback(translatedTarget(first), translatedTarget(second))).messages.stream(
        REQUEST,
      ),
    );

    expectOneMessage(events, final);
    expect(second.requests.map((r) => r.path)).toEqual(['/v1/chat/completions']);
    const continued = second.requests[0].body as any;
    expect(continued.messages).toEqual([
      { role: 'user', content: 'Tell me a story' },
      { role: 'assistant', content: SENT },
      { role: 'user', content: CONTINUE_INSTRUCTION },
    ]);
  });

  it('skips what a next target that starts over repeats: the client reads the text once', async () => {
    first.enqueue({ text: WHOLE, cutAfter: 6 });
    second.enqueue({ text: WHOLE });
    const stream = await gatewayAnthropic(
      gateway,
      fallback(translatedTarget(first), translatedTarget(second)),
    ).messages.create({
      ...REQUEST,
      stream: true,
    });
    const events: StreamEvent[] = [];
    for await (const event of stream) events.push(event as unknown as StreamEvent);

    expectMessagesGrammar(events);
    expect(events.filter((e) => e.type === 'content_block_start')).toHaveLength(1);
    expect(textOf(events)).toBe(WHOLE);
    expect(second.requests).toHaveLength(1);
  });

  it('is continued on a Gemini target', async () => {
    first.enqueue({ text: WHOLE, cutAfter: 6 });
    google.enqueue({ events: geminiEvents(REST) });
    const { events, final } = await streamed(
      gatewayAnthropic(gateway, fallback(translatedTarget(first), googleTarget())).messages.stream(REQUEST),
    );

    expectOneMessage(events, final);
    const contents = (google.requests.at(-1)!.body as any).contents;
    expect(contents.slice(-2)).toEqual([
      { role: 'model', parts: [{ text: SENT }] },
      { role: 'user', parts: [{ text: CONTINUE_INSTRUCTION }] },
    ]);
  });

  it('is continued as chat on Anthropic, which has the API natively: the partial text as a prefill', async () => {
    first.enqueue({ text: WHOLE, cutAfter: 6 });
    anthropic.enqueue({ kind: 'stream', events: anthropicEvents(REST) });
    const { events, final } = await streamed(
      gatewayAnthropic(gateway, fallback(translatedTarget(first), anthropicTarget())).messages.stream(
        REQUEST,
      ),
    );

    expectOneMessage(events, final);
    expect(anthropic.requests).toHaveLength(1);
    const messages = anthropic.requests[0].body.messages as any[];
    expect(messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Tell me a story' }] },
      { role: 'assistant', content: [{ type: 'text', text: SENT }] },
    ]);
  });
});

describe('a broken native Messages stream under a fallback config', () => {
  // Its own fake: a reply left queued by a failing test above cannot stand in for this one's.
  let native: FakeAnthropic;
  beforeAll(async () => {
    native = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY });
  });
  afterAll(() => native?.close());

  const nativeFirst = () =>
    fallback({ ...anthropicTarget(), custom_host: native.url }, translatedTarget(second));

  it("is continued on the next target inside Anthropic's open text block: one message, the text once", async () => {
    // message_start, the text block's start and three words ("Once upon a"), then Anthropic fails.
    native.enqueue({
      kind: 'stream',
      events: anthropicEvents(WHOLE),
      error: { type: 'overloaded_error', message: 'Overloaded', afterEvents: 5 },
    });
    const sent = 'Once upon a';
    second.enqueue({ text: WHOLE.slice(sent.length) });
    const { events, final } = await streamed(
      gatewayAnthropic(gateway, nativeFirst()).messages.stream(REQUEST),
    );

    expectOneMessage(events, final);
    expect(final.id).toBe('msg_continued');
    expect(events.filter((e) => e.type === 'message_start')).toHaveLength(1);
    expect(second.requests.map((r) => (r.body as any).messages)).toEqual([
      [
        { role: 'user', content: 'Tell me a story' },
        { role: 'assistant', content: sent },
        { role: 'user', content: CONTINUE_INSTRUCTION },
      ],
    ]);
  });

  it('is continued when it broke after message_start, before any block: the next target answers in full', async () => {
    native.enqueue({
      kind: 'stream',
      events: anthropicEvents(WHOLE),
      error: { type: 'overloaded_error', message: 'Overloaded', afterEvents: 1 },
    });
    second.enqueue({ text: WHOLE });
    const { events, final } = await streamed(
      gatewayAnthropic(gateway, nativeFirst()).messages.stream(REQUEST),
    );

    expectOneMessage(events, final);
    expect(events.filter((e) => e.type === 'message_start')).toHaveLength(1);
    expect(final.id).toBe('msg_continued');
  });

  it('ends with event: error and is not continued once a block other than text went out', async () => {
    const [start, ...rest] = anthropicEvents(WHOLE);
    native.enqueue({
      kind: 'stream',
      events: [
        start,
        {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'thinking', thinking: '', signature: '' },
        },
        { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Hmm' } },
        ...rest,
      ],
      error: { type: 'overloaded_error', message: 'Overloaded', afterEvents: 3 },
    });
    const raw = await postRawSse(
      `${gateway.url}/messages`,
      { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-config': JSON.stringify(nativeFirst()) },
      { ...REQUEST, stream: true },
    );

    expect(raw.frames.map((f) => f.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'error',
    ]);
    expect(JSON.parse(raw.frames.at(-1)!.data).error).toMatchObject({ type: 'overloaded_error' });
    expect(second.requests).toHaveLength(0);
  });
});
