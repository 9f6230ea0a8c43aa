/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// POST /v1/responses translated to Anthropic's Messages API: the openai SDK's responses client against the
// gateway and a fake Anthropic replaying recorded answers; every answer and event checked against the
// OpenAI OpenAPI document, every stored response read back through the SDK.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAnthropicJsonFixture } from '../fakes/anthropic/fixtures.js';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';

const API_KEY = 'sk-ant-responses';

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

const lastBody = () => fake.requests.at(-1)!.body as any;

describe('responses translated to anthropic', () => {
  it('answers text, stores it, and reads it back', async () => {
    const recorded = readAnthropicJsonFixture('anthropic-text.json') as any;
    const response = await client.responses.create({
      model: 'claude-sonnet-4-5',
      instructions: 'You are friendly.',
      input: 'Hello, how are you?',
      metadata: { team: 'a' },
    });
    expectOpenAPIValid('Response', response);
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe(recorded.content[0].text);
    expect(response.usage?.input_tokens).toBe(recorded.usage.input_tokens);
    expect(response.metadata).toEqual({ team: 'a' });
    expect(lastBody()).toMatchObject({
      system: [{ type: 'text', text: 'You are friendly.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello, how are you?' }] }],
    });

    const again = await client.responses.retrieve(response.id);
    expectOpenAPIValid('Response', again);
    expect(again.output).toEqual(response.output);
    const items = await client.responses.inputItems.list(response.id);
    expectOpenAPIValid('ResponseItemList', (items as any).body);
    expect(items.data).toHaveLength(1);
    expect(items.data[0]).toMatchObject({ type: 'message', role: 'user', content: [{ type: 'input_text' }] });

    await client.responses.delete(response.id);
    await expect(client.responses.retrieve(response.id)).rejects.toMatchObject({ status: 404 });
  });

  it("names text.format, the client's field, when Claude cannot answer json_object beside tools", async () => {
    const error: any = await client.responses
      .create({
        model: 'claude-sonnet-4-5',
        input: 'Hi',
        text: { format: { type: 'json_object' } },
        tools: [{ type: 'function', name: 'f', parameters: { type: 'object' }, strict: false }],
      })
      .catch((e) => e);
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ param: 'text.format', type: 'invalid_request_error' });
    expect(error.error.message).toMatch(/^text\.format json_object cannot be combined with tools/);
  });

  it('offers Claude only the tools an allowed_tools choice allows, in its mode', async () => {
    const tool = (name: string) => ({
      type: 'function' as const,
      name,
      parameters: { type: 'object' },
      strict: false,
    });
    const response = await client.responses.create({
      model: 'claude-sonnet-4-5',
      input: 'What time is it?',
      tools: [tool('get_weather'), tool('get_time')],
      tool_choice: {
        type: 'allowed_tools',
        mode: 'required',
        tools: [{ type: 'function', name: 'get_time' }],
      },
    });
    expect(response.status).toBe('completed');
    expect(lastBody().tools.map((t: any) => t.name)).toEqual(['get_time']);
    expect(lastBody().tool_choice).toEqual({ type: 'any' });
    // The response shows the choice as it was asked.
    expect(response.tool_choice).toMatchObject({ type: 'allowed_tools', mode: 'required' });
    const unknown: any = await client.responses
      .create({
        model: 'claude-sonnet-4-5',
        input: 'Hi',
        tools: [tool('get_weather')],
        tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'nope' }] },
      })
      .catch((e) => e);
    expect(unknown.status).toBe(400);
    expect(unknown.error).toMatchObject({ param: 'tool_choice.tools[0]' });
  });

  it("counts the prompt cache's reads and writes in usage", async () => {
    const recorded = readAnthropicJsonFixture('anthropic-text.json') as any;
    fake.enqueue({
      kind: 'json',
      body: {
        ...recorded,
        usage: {
          input_tokens: 10,
          cache_read_input_tokens: 300,
          cache_creation_input_tokens: 2000,
          output_tokens: 29,
        },
      },
    });
    const response = await client.responses.create({ model: 'claude-sonnet-4-5', input: 'Hello' });
    expectOpenAPIValid('Response', response);
    expect(response.usage).toMatchObject({
      input_tokens: 2310,
      input_tokens_details: { cached_tokens: 300, cache_write_tokens: 2000 },
    });
  });

  it('streams the event grammar with sequence numbers', async () => {
    const stream = await client.responses.create({
      model: 'claude-sonnet-4-5',
      input: 'Hello',
      stream: true,
    });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    for (const event of events) expectOpenAPIValid('ResponseStreamEvent', event);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events[0].type).toBe('response.created');
    expect(events[1].type).toBe('response.in_progress');
    expect(events.filter((e) => /^response\.(completed|failed|incomplete)$/.test(e.type))).toHaveLength(1);
    const done = events.at(-1);
    expect(done.type).toBe('response.completed');
    const text = events
      .filter((e) => e.type === 'response.output_text.delta')
      .map((e) => e.delta)
      .join('');
    expect(done.response.output[0].content[0].text).toBe(text);
    const stored = await client.responses.retrieve(done.response.id);
    expect(stored.status).toBe('completed');
    expect(stored.output).toEqual(done.response.output);
  });

  it('asks for thinking with reasoning.effort and streams it as reasoning events', async () => {
    fake.enqueue({ kind: 'stream', fixture: 'anthropic-clear-thinking.1.chunks.txt' });
    const stream = await client.responses.create({
      model: 'claude-sonnet-4-5',
      input: 'What is 925 / 5?',
      reasoning: { effort: 'low' },
      stream: true,
    });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    for (const event of events) expectOpenAPIValid('ResponseStreamEvent', event);
    expect(lastBody().thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    const thought = events
      .filter((e) => e.type === 'response.reasoning_text.delta')
      .map((e) => e.delta)
      .join('');
    expect(thought.length).toBeGreaterThan(0);
    const done = events.at(-1);
    expect(done.type).toBe('response.completed');
    expect(done.response.reasoning).toEqual({ effort: 'low', summary: null, generate_summary: null });
    const [reasoning, message] = done.response.output;
    expect(reasoning).toMatchObject({
      type: 'reasoning',
      content: [{ type: 'reasoning_text', text: thought }],
    });
    expect(reasoning.encrypted_content).toBeTruthy();
    expect(message.type).toBe('message');
  });

  it("streams thinking in a form the openai SDK's stream helper assembles", async () => {
    fake.enqueue({ kind: 'stream', fixture: 'anthropic-clear-thinking.1.chunks.txt' });
    // The helper builds each item from the events: a reasoning item's text needs its part opened first.
    const stream = client.responses.stream({
      model: 'claude-sonnet-4-5',
      input: 'What is 925 / 5?',
      reasoning: { effort: 'low' },
    });
    const types: string[] = [];
    stream.on('event', (event) => types.push(event.type));
    const final = await stream.finalResponse();
    const reasoningAt = types.indexOf('response.output_item.added');
    expect(types.slice(reasoningAt, reasoningAt + 3)).toEqual([
      'response.output_item.added',
      'response.content_part.added',
      'response.reasoning_text.delta',
    ]);
    const closeAt = types.indexOf('response.reasoning_text.done');
    expect(types.slice(closeAt, closeAt + 3)).toEqual([
      'response.reasoning_text.done',
      'response.content_part.done',
      'response.output_item.done',
    ]);
    const [reasoning] = final.output;
    expect(reasoning).toMatchObject({ type: 'reasoning', content: [{ type: 'reasoning_text' }] });
    // The helper's reasoning item is the stored one (its message text gains the helper's own `parsed`).
    const stored = await client.responses.retrieve(final.id);
    expect(reasoning).toEqual(stored.output[0]);
  });

  it('streams text then a tool call as two output items, each opened and closed', async () => {
    fake.enqueue({ kind: 'stream', fixture: 'anthropic-tool-no-args.chunks.txt' });
    const stream = await client.responses.create({
      model: 'claude-sonnet-4-5',
      input: 'Update the issue list',
      tools: [
        {
          type: 'function',
          name: 'updateIssueList',
          parameters: { type: 'object', properties: {} },
          strict: false,
        },
      ],
      stream: true,
    });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    for (const event of events) expectOpenAPIValid('ResponseStreamEvent', event);
    const items = events
      .filter((e) => e.type === 'response.output_item.added' || e.type === 'response.output_item.done')
      .map((e) => `${e.type.split('.').at(-1)}:${e.output_index}:${e.item.type}`);
    expect(items).toEqual([
      'added:0:message',
      'done:0:message',
      'added:1:function_call',
      'done:1:function_call',
    ]);
    const done = events.at(-1);
    expect(done.type).toBe('response.completed');
    const call = done.response.output[1];
    expect(call).toMatchObject({ type: 'function_call', name: 'updateIssueList', status: 'completed' });
    expect(JSON.parse(call.arguments || '{}')).toEqual({});
    expect(call.call_id).toMatch(/^toolu_/);
  });
});
