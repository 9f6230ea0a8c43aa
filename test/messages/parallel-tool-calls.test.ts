/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// Parallel tool calls of a translated stream, through the Anthropic SDK's messages.stream(): a chat stream
// tells each call's deltas by the call's index, and nothing in its grammar keeps one call's deltas together,
// so a server may send every call's id and name first and their arguments after. Anthropic's grammar has
// one block open at a time, each stopped once whole: the SDK hands a block to `contentBlock` listeners at
// its content_block_stop, and a tool_use stopped before its input came was handed on empty.
import type Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayAnthropic } from '../helpers/anthropic-client.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startWireUpstream, type WireUpstream } from '../helpers/wire-upstream.js';
import { expectMessagesGrammar, type StreamEvent } from './anthropic-shapes.js';

let gateway: TestGateway;
let upstream: WireUpstream;
let events: Array<{ data: string }> = [];

function chunk(delta: Record<string, unknown>, finish: string | null = null, usage?: unknown) {
  return {
    data: JSON.stringify({
      id: 'chatcmpl-parallel',
      object: 'chat.completion.chunk',
      created: 1_770_000_000,
      model: 'llama-3.3-70b-versatile',
      choices: usage ? [] : [{ index: 0, delta, finish_reason: finish }],
      ...(usage ? { usage } : {}),
    }),
  };
}

const opened = (index: number, id: string, name: string) => ({
  index,
  id,
  type: 'function',
  function: { name, arguments: '' },
});
const args = (index: number, part: string) => ({ index, function: { arguments: part } });
const END = [
  chunk({}, 'tool_calls'),
  chunk({}, null, { prompt_tokens: 40, completion_tokens: 20, total_tokens: 60 }),
];

/** Two calls opened in one chunk, their arguments in the next, both in pieces, then a third call. */
const INTERLEAVED = [
  chunk({ role: 'assistant', content: 'Looking up.' }),
  chunk({ tool_calls: [opened(0, 'call_paris', 'get_weather'), opened(1, 'call_rome', 'get_time')] }),
  chunk({ tool_calls: [args(0, '{"city":'), args(1, '{"zone":')] }),
  chunk({ tool_calls: [args(1, '"CET"}'), args(0, '"Paris"}')] }),
  chunk({ tool_calls: [opened(2, 'call_oslo', 'get_weather')] }),
  chunk({ tool_calls: [args(2, '{"city":"Oslo"}')] }),
  ...END,
];

/** The usual order: each call whole before the next. */
const ONE_AFTER_ANOTHER = [
  chunk({ role: 'assistant', content: 'Looking up.' }),
  chunk({ tool_calls: [opened(0, 'call_paris', 'get_weather')] }),
  chunk({ tool_calls: [args(0, '{"city":'), args(0, '"Paris"}')] }),
  chunk({ tool_calls: [opened(1, 'call_rome', 'get_time')] }),
  chunk({ tool_calls: [args(1, '{"zone":"CET"}')] }),
  chunk({ tool_calls: [opened(2, 'call_oslo', 'get_weather')] }),
  chunk({ tool_calls: [args(2, '{"city":"Oslo"}')] }),
  ...END,
];

const TOOLS = [
  { name: 'get_weather', input_schema: { type: 'object' as const } },
  { name: 'get_time', input_schema: { type: 'object' as const } },
];

const EXPECTED = [
  { type: 'text', text: 'Looking up.' },
  { type: 'tool_use', id: 'call_paris', name: 'get_weather', input: { city: 'Paris' } },
  { type: 'tool_use', id: 'call_rome', name: 'get_time', input: { zone: 'CET' } },
  { type: 'tool_use', id: 'call_oslo', name: 'get_weather', input: { city: 'Oslo' } },
];

beforeAll(async () => {
  upstream = await startWireUpstream(() => ({ events, done: true }));
  gateway = await startGateway();
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

async function streamed() {
  const stream = gatewayAnthropic(gateway, {
    provider: 'groq',
    api_key: 'gsk-test',
    custom_host: upstream.url,
  }).messages.stream({
    model: 'llama-3.3-70b-versatile',
    max_tokens: 200,
    messages: [{ role: 'user', content: 'Weather in Paris and Oslo, time in Rome' }],
    tools: TOOLS,
  });
  const blocks: Anthropic.ContentBlock[] = [];
  stream.on('contentBlock', (block) => blocks.push(structuredClone(block)));
  const seen: StreamEvent[] = [];
  for await (const event of stream) seen.push(event as unknown as StreamEvent);
  return { events: seen, blocks, final: await stream.finalMessage() };
}

describe('parallel tool calls of a translated stream', () => {
  it.each([
    ['streamed interleaved', INTERLEAVED],
    ['streamed one after another', ONE_AFTER_ANOTHER],
  ])('are tool_use blocks each stopped whole when %s', async (_name, chunks) => {
    events = chunks;
    const { events: seen, blocks, final } = await streamed();
    expectMessagesGrammar(seen);
    expect(final.content).toEqual(EXPECTED);
    expect(final.stop_reason).toBe('tool_use');
    // What each block's content_block_stop handed on is the block whole.
    expect(blocks).toEqual(EXPECTED);
  });

  it('streams the arguments of calls sent one after another as they come', async () => {
    events = ONE_AFTER_ANOTHER;
    const { events: seen } = await streamed();
    const deltas = seen
      .filter((e: any) => e.type === 'content_block_delta' && e.delta.type === 'input_json_delta')
      .map((e: any) => [e.index, e.delta.partial_json]);
    expect(deltas).toEqual([
      [1, '{"city":'],
      [1, '"Paris"}'],
      [2, '{"zone":"CET"}'],
      [3, '{"city":"Oslo"}'],
    ]);
  });
});
