/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// max_tool_calls on a translated target, where function tools are the only tools: the response holds at
// most that many function calls (further calls the model makes are ignored, as OpenAI ignores further
// built-in tool calls), streamed or not; Claude is asked for one call at a time under a limit of 1; a limit
// under 1 is refused, as OpenAI refuses it. The openai SDK against the gateway; Anthropic's fake.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';

const API_KEY = 'sk-ant-tool-calls';

let gateway: TestGateway;
let anthropic: FakeAnthropic;
let client: OpenAI;

beforeAll(async () => {
  [gateway, anthropic] = await Promise.all([startGateway(), startFakeAnthropic({ apiKey: API_KEY })]);
  client = gatewayOpenAI(gateway, { provider: 'anthropic', api_key: API_KEY, custom_host: anthropic.url });
});

afterAll(async () => {
  await Promise.all([gateway?.close(), anthropic?.close()]);
});

const TOOLS = [{ type: 'function' as const, name: 'lookup', parameters: { type: 'object' }, strict: false }];
const CALLS = ['toolu_1', 'toolu_2', 'toolu_3'].map((id, i) => ({
  type: 'tool_use',
  id,
  name: 'lookup',
  input: { q: `city ${i}` },
}));

const message = {
  id: 'msg_01calls',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [{ type: 'text', text: 'Looking up.' }, ...CALLS],
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: { input_tokens: 10, output_tokens: 30 },
};

const stream = [
  { type: 'message_start', message: { ...message, content: [], stop_reason: null } },
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Looking up.' } },
  { type: 'content_block_stop', index: 0 },
  ...CALLS.flatMap((call, i) => [
    {
      type: 'content_block_start',
      index: i + 1,
      content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
    },
    {
      type: 'content_block_delta',
      index: i + 1,
      delta: { type: 'input_json_delta', partial_json: JSON.stringify(call.input) },
    },
    { type: 'content_block_stop', index: i + 1 },
  ]),
  {
    type: 'message_delta',
    delta: { stop_reason: 'tool_use', stop_sequence: null },
    usage: { output_tokens: 30 },
  },
  { type: 'message_stop' },
];

/** The SDK's types do not have the field yet. */
const limit = (maxToolCalls: number): object => ({ max_tool_calls: maxToolCalls });

const calls = (output: any[]) => output.filter((item) => item.type === 'function_call');

describe('max_tool_calls on a translated target', () => {
  it('keeps the first calls up to the limit and echoes it', async () => {
    anthropic.enqueue({ kind: 'json', body: message });
    const response = await client.responses.create({
      model: 'claude-sonnet-4-5',
      input: 'Weather in three cities',
      tools: TOOLS,
      ...limit(2),
    });
    expectOpenAPIValid('Response', response);
    expect((response as any).max_tool_calls).toBe(2);
    expect(calls(response.output).map((item) => item.call_id)).toEqual(['toolu_1', 'toolu_2']);
    expect(response.output_text).toBe('Looking up.');
  });

  it('streams no event of a call past the limit', async () => {
    anthropic.enqueue({ kind: 'stream', events: stream });
    const events: any[] = [];
    for await (const event of await client.responses.create({
      model: 'claude-sonnet-4-5',
      input: 'Weather in three cities',
      tools: TOOLS,
      ...limit(2),
      stream: true,
    })) {
      expectOpenAPIValid('ResponseStreamEvent', event);
      events.push(event);
    }
    const added = events.filter((e) => e.type === 'response.output_item.added').map((e) => e.item);
    expect(calls(added).map((item) => item.call_id)).toEqual(['toolu_1', 'toolu_2']);
    const argumentsSent = events.filter((e) => e.type === 'response.function_call_arguments.delta');
    expect(argumentsSent.map((e) => e.delta)).toEqual(['{"q":"city 0"}', '{"q":"city 1"}']);
    const done = events.at(-1);
    expect(done.type).toBe('response.completed');
    expect(calls(done.response.output).map((item: any) => item.call_id)).toEqual(['toolu_1', 'toolu_2']);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  });

  it('asks Claude for one call at a time under a limit of 1', async () => {
    anthropic.enqueue({ kind: 'json', body: message });
    const one = await client.responses.create({
      model: 'claude-sonnet-4-5',
      input: 'Weather',
      tools: TOOLS,
      ...limit(1),
    });
    expect(calls(one.output)).toHaveLength(1);
    expect((anthropic.requests.at(-1)!.body as any).tool_choice).toMatchObject({
      disable_parallel_tool_use: true,
    });
  });

  it('refuses a limit under 1 before any call, as OpenAI does, whatever the target', async () => {
    // OpenAI answers 400 "Invalid 'max_tool_calls': integer below minimum value. Expected a value >= 1, but
    // got 0 instead.": a translated target must not serve what a native one refuses.
    const before = anthropic.requests.length;
    for (const value of [0, -1]) {
      const error: any = await client.responses
        .create({ model: 'claude-sonnet-4-5', input: 'Weather', tools: TOOLS, ...limit(value) })
        .catch((err: unknown) => err);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.param).toBe('max_tool_calls');
      expect(error.message).toContain('max_tool_calls must be at least 1');
    }
    expect(anthropic.requests.length).toBe(before);
  });
});
