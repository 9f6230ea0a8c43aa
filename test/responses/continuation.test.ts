/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// A Responses stream that breaks mid-way, under a fallback config: a translated stream is continued on the
// next target (as chat, whatever that target is) and the client reads one coherent event stream; a native
// stream is not continued and ends with response.failed. The openai SDK against the gateway and fake
// OpenAI-wire upstreams that cut their streams.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CONTINUE_INSTRUCTION } from '../../src/gateway/routing/continuation.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';

let gateway: TestGateway;
let first: FakeUpstream;
let second: FakeUpstream;

beforeAll(async () => {
  [gateway, first, second] = await Promise.all([
    startGateway(),
    startFakeOpenAI({ name: 'first' }),
    startFakeOpenAI({ name: 'second' }),
  ]);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), first?.close(), second?.close()]);
});

beforeEach(() => {
  first.reset();
  second.reset();
});

// groq has no Responses API: it is called translated, on the fake's chat completions.
const translatedTarget = (fake: FakeUpstream) => ({
  provider: 'groq',
  api_key: 'gsk-test',
  custom_host: fake.url,
});
const nativeTarget = (fake: FakeUpstream) => ({
  provider: 'openai',
  api_key: 'sk-oai',
  custom_host: fake.url,
});
const fallback = (...targets: Record<string, unknown>[]) => ({ strategy: { mode: 'fallback' }, targets });

const WHOLE = 'Once upon a time there was a gateway that kept every stream whole';
// The fake's first event is the role chunk, then one word per chunk: six events carry five words.
const SENT = 'Once upon a time there';
const REST = WHOLE.slice(SENT.length);

async function collect(stream: AsyncIterable<any>): Promise<any[]> {
  const events: any[] = [];
  for await (const event of stream) events.push(event);
  for (const event of events) expectOpenAPIValid('ResponseStreamEvent', event);
  return events;
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);
const textOf = (events: any[]) =>
  events
    .filter((e) => e.type === 'response.output_text.delta')
    .map((e) => e.delta)
    .join('');

function expectOneCompletedStream(events: any[]): any {
  const numbers = events.map((e) => e.sequence_number);
  expect(numbers).toEqual(numbers.map((_, i) => i));
  expect(events.filter((e) => e.type === 'response.created')).toHaveLength(1);
  expect(events.filter((e) => TERMINAL.has(e.type)).map((e) => e.type)).toEqual(['response.completed']);
  expect(events.at(-1).type).toBe('response.completed');
  // One message item, opened once and closed once, whatever target wrote which part of it.
  expect(events.filter((e) => e.type === 'response.output_item.added')).toHaveLength(1);
  expect(events.filter((e) => e.type === 'response.output_item.done')).toHaveLength(1);
  return events.at(-1).response;
}

describe('a broken Responses stream under a fallback config', () => {
  it('continues a translated stream on the next target: one stream, one completed response, stored whole', async () => {
    first.enqueue({ text: WHOLE, cutAfter: 6 });
    second.enqueue({ text: REST });
    const client = gatewayOpenAI(gateway, fallback(translatedTarget(first), translatedTarget(second)));
    const events = await collect(
      await client.responses.create({ model: 'llama-3.3-70b', input: 'Tell me a story', stream: true }),
    );

    const response = expectOneCompletedStream(events);
    expect(textOf(events)).toBe(WHOLE);
    expect(events.find((e) => e.type === 'response.output_text.done').text).toBe(WHOLE);
    expect(response.output_text ?? response.output[0].content[0].text).toBe(WHOLE);

    const continued = second.requests[0].body as any;
    expect(second.requests[0].path).toBe('/v1/chat/completions');
    expect(continued.messages.slice(-2)).toEqual([
      { role: 'assistant', content: SENT },
      { role: 'user', content: CONTINUE_INSTRUCTION },
    ]);

    const stored = await client.responses.retrieve(response.id);
    expectOpenAPIValid('Response', stored);
    expect(stored.status).toBe('completed');
    expect(stored.output_text).toBe(WHOLE);
  });

  it('continues a translated stream as chat on a next target that has the API natively', async () => {
    first.enqueue({ text: WHOLE, cutAfter: 6 });
    second.enqueue({ text: REST });
    const client = gatewayOpenAI(gateway, fallback(translatedTarget(first), nativeTarget(second)));
    const events = await collect(
      await client.responses.create({ model: 'gpt-4o', input: 'Tell me a story', stream: true }),
    );

    expectOneCompletedStream(events);
    expect(textOf(events)).toBe(WHOLE);
    expect(second.requests.map((r) => r.path)).toEqual(['/v1/chat/completions']);
  });

  it('ends a broken native stream with response.failed: no other target continues it', async () => {
    first.enqueue({ cutAfter: 5 });
    const client = gatewayOpenAI(gateway, fallback(nativeTarget(first), translatedTarget(second)));
    const events = await collect(
      await client.responses.create({ model: 'gpt-4o', input: 'one two three four five', stream: true }),
    );

    expect(events.filter((e) => TERMINAL.has(e.type)).map((e) => e.type)).toEqual(['response.failed']);
    expect(second.requests).toHaveLength(0);
    const stored = await client.responses.retrieve(events.at(-1).response.id);
    expect(stored.status).toBe('failed');
  });
});
