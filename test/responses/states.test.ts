/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// The states and errors of a response, and what the translation sends: `incomplete` at max_output_tokens,
// `failed` when the stream breaks, function calls streamed as argument deltas, refused built-in tools,
// metadata limits, truncation against the context window, the input item list's paging. The openai SDK
// against the gateway and the fake OpenAI chat API.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openAIErrors } from '../fakes/openai/errors.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import { loadSettings } from '../../src/settings.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';

let gateway: TestGateway;
let upstream: FakeUpstream;
let client: OpenAI;

beforeAll(async () => {
  [gateway, upstream] = await Promise.all([startGateway(), startFakeOpenAI({ name: 'up' })]);
  client = gatewayOpenAI(gateway, {
    provider: 'openai-compatible',
    api_key: 'sk-up',
    custom_host: upstream.url,
  });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

beforeEach(() => upstream.reset());

const sentBody = () => upstream.requests.at(-1)!.body as any;

async function collect(stream: AsyncIterable<any>): Promise<any[]> {
  const events: any[] = [];
  for await (const event of stream) events.push(event);
  for (const event of events) expectOpenAPIValid('ResponseStreamEvent', event);
  return events;
}

const weather = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Current weather of a city',
  // Closed, every property required: strict mode takes it (strict-tools.test.ts).
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
  strict: true,
};

async function expect400(promise: Promise<unknown>, param: string, message?: RegExp): Promise<void> {
  const error: any = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  expect(error.status).toBe(400);
  expect(error.error).toMatchObject({ param, type: 'invalid_request_error' });
  if (message) expect(error.error.message).toMatch(message);
}

describe('states', () => {
  it('is incomplete at max_output_tokens, streamed and not', async () => {
    const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    upstream.enqueue({ text: words });
    const response = await client.responses.create({ model: 'gpt-4o', input: 'Talk', max_output_tokens: 16 });
    expectOpenAPIValid('Response', response);
    // openai-compatible servers know the limit as max_tokens.
    expect(sentBody().max_tokens).toBe(16);
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'max_output_tokens' });

    upstream.enqueue({ text: words });
    const events = await collect(
      await client.responses.create({ model: 'gpt-4o', input: 'Talk', max_output_tokens: 16, stream: true }),
    );
    const last = events.at(-1);
    expect(last.type).toBe('response.incomplete');
    expect(last.response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect((await client.responses.retrieve(last.response.id)).status).toBe('incomplete');
  });

  it('fails in band when the stream breaks after it began, and is stored as failed', async () => {
    upstream.enqueue({ text: 'one two three four five six', errorEventAfter: 3 });
    // Read as sent: the openai SDK stops at the provider's error event, which comes first.
    const sent = await client.responses.create({ model: 'gpt-4o', input: 'Talk', stream: true }).asResponse();
    const events = (await sent.text())
      .split('\n\n')
      .filter((frame) => frame.trim() !== '')
      .map((frame) => JSON.parse(/^data: (.*)$/m.exec(frame)![1]));
    for (const event of events) expectOpenAPIValid('ResponseStreamEvent', event);
    const terminal = events.filter((e) => /^response\.(completed|failed|incomplete)$/.test(e.type));
    expect(terminal.map((e) => e.type)).toEqual(['response.failed']);
    expect(events.at(-1)).toEqual(terminal[0]);
    // The provider's error, as it sent it, then the Response's failure in the Response's own codes.
    expect(events.at(-2)).toMatchObject({
      type: 'error',
      code: 'stream_error',
      error: { type: 'server_error', code: 'stream_error' },
    });
    expect(terminal[0].response.error).toMatchObject({ code: 'server_error' });
    const stored = await client.responses.retrieve(terminal[0].response.id);
    expect(stored.status).toBe('failed');
    expect(stored.error?.code).toBe('server_error');
    // The message the break cut short is incomplete, in its done event and where it is stored.
    const done = events.find((e) => e.type === 'response.output_item.done');
    expect(done.item.status).toBe('incomplete');
    expect(stored.output.map((item: any) => item.status)).toEqual(['incomplete']);
  });

  it('answers a failed call before any output with the OpenAI error', async () => {
    upstream.enqueue({ status: 500 });
    const error: any = await client.responses.create({ model: 'gpt-4o', input: 'Talk' }).catch((e) => e);
    expect(error.status).toBe(500);
  });

  it('streams a function call as argument deltas and sends its output back', async () => {
    const events = await collect(
      await client.responses.create({
        model: 'gpt-4o',
        input: 'Weather in Paris?',
        tools: [weather],
        tool_choice: 'required',
        stream: true,
      }),
    );
    expect(sentBody().tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Current weather of a city',
          parameters: weather.parameters,
          strict: true,
        },
      },
    ]);
    expect(sentBody().tool_choice).toBe('required');
    const types = events.map((e) => e.type);
    expect(types).toContain('response.function_call_arguments.delta');
    const done = events.find((e) => e.type === 'response.function_call_arguments.done');
    const completed = events.at(-1);
    expect(completed.type).toBe('response.completed');
    const call = completed.response.output[0];
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: done.arguments });
    expect(JSON.parse(call.arguments)).toEqual({ input: 'Weather in Paris?' });

    await client.responses.create({
      model: 'gpt-4o',
      previous_response_id: completed.response.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"temp":21}' }],
      tools: [weather],
    });
    expect(sentBody().messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: call.call_id,
            type: 'function',
            function: { name: 'get_weather', arguments: call.arguments },
          },
        ],
      },
      { role: 'tool', tool_call_id: call.call_id, content: '{"temp":21}' },
    ]);
  });

  it('translates images, text.format, instructions and sampling', async () => {
    const response = await client.responses.create({
      model: 'gpt-4o',
      instructions: 'Answer in JSON.',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is this?' },
            { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'low' },
          ],
        },
      ],
      text: {
        format: {
          type: 'json_schema',
          name: 'answer',
          schema: {
            type: 'object',
            properties: { thing: { type: 'string' } },
            required: ['thing'],
            additionalProperties: false,
          },
          strict: true,
        },
      },
      temperature: 0.2,
      top_p: 0.9,
      user: 'user-1',
    });
    expectOpenAPIValid('Response', response);
    expect(response.text?.format).toMatchObject({ type: 'json_schema', name: 'answer' });
    expect(sentBody()).toMatchObject({
      model: 'gpt-4o',
      temperature: 0.2,
      top_p: 0.9,
      user: 'user-1',
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'answer', schema: { type: 'object' }, strict: true },
      },
      messages: [
        { role: 'system', content: 'Answer in JSON.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
          ],
        },
      ],
    });
  });
});

describe('refusals', () => {
  it('refuses built-in tools a translated provider cannot run, naming them', async () => {
    await expect400(
      client.responses.create({
        model: 'gpt-4o',
        input: 'Hi',
        tools: [weather, { type: 'web_search' } as any],
      }),
      'tools[1].type',
      /web_search/,
    );
    await expect400(
      client.responses.create({
        model: 'gpt-4o',
        input: 'Hi',
        tools: [
          { type: 'file_search', vector_store_ids: ['vs_1'] },
          { type: 'code_interpreter', container: { type: 'auto' } },
        ],
      }),
      'tools[0].type',
      /file_search, code_interpreter/,
    );
    expect(upstream.requests).toHaveLength(0);
  });

  it("refuses a prompt, OpenAI's stored template, which a translated provider would answer without", async () => {
    await expect400(
      client.responses.create({
        model: 'gpt-4o',
        input: 'Hi',
        prompt: { id: 'pmpt_123', variables: { city: 'Paris' } },
      }),
      'prompt',
      /pmpt_123/,
    );
    expect(upstream.requests).toHaveLength(0);
  });

  it('checks a function tool as one: its name, its parameters', async () => {
    await expect400(
      client.responses.create({ model: 'gpt-4o', input: 'Hi', tools: [{ type: 'function' } as any] }),
      'tools[0].name',
    );
    await expect400(
      client.responses.create({
        model: 'gpt-4o',
        input: 'Hi',
        tools: [weather, { type: 'function', name: 'f', parameters: 5 } as any],
      }),
      'tools[1].parameters',
    );
    expect(upstream.requests).toHaveLength(0);
  });

  it('holds metadata to 16 pairs, keys of 64 and values of 512 characters', async () => {
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
    await expect400(client.responses.create({ model: 'gpt-4o', input: 'Hi', metadata: many }), 'metadata');
    await expect400(
      client.responses.create({ model: 'gpt-4o', input: 'Hi', metadata: { ['k'.repeat(65)]: 'v' } }),
      `metadata.${'k'.repeat(65)}`,
    );
    await expect400(
      client.responses.create({ model: 'gpt-4o', input: 'Hi', metadata: { k: 'v'.repeat(513) } }),
      'metadata.k',
    );
    const ok = Object.fromEntries(
      Array.from({ length: 16 }, (_, i) => [`${i}`.padEnd(64, 'k'), 'v'.repeat(512)]),
    );
    const response = await client.responses.create({ model: 'gpt-4o', input: 'Hi', metadata: ok });
    expect(response.metadata).toEqual(ok);
  });

  it('names a missing previous response and a bad body field', async () => {
    const error: any = await client.responses
      .create({ model: 'gpt-4o', input: 'Hi', previous_response_id: 'resp_nope' })
      .catch((e) => e);
    expect(error.status).toBe(404);
    expect(error.error).toMatchObject({ param: 'previous_response_id' });
    await expect400(
      client.responses.create({ model: 'gpt-4o', input: 'Hi', truncation: 'sometimes' as any }),
      'truncation',
    );
    await expect400(client.responses.create({ model: 'gpt-4o', input: [] }), 'input');
    const first = await client.responses.create({ model: 'gpt-4o', input: 'one' });
    const second = await client.responses.create({
      model: 'gpt-4o',
      input: 'two',
      previous_response_id: first.id,
    });
    await client.responses.delete(first.id);
    const broken: any = await client.responses
      .create({ model: 'gpt-4o', input: 'three', previous_response_id: second.id })
      .catch((e) => e);
    expect(broken.status).toBe(404);
    expect(broken.error).toMatchObject({ param: 'previous_response_id' });
    expect(broken.error.message).toContain(first.id);
    const missing: any = await client.responses.retrieve('resp_nope').catch((e) => e);
    expect(missing.status).toBe(404);
  });

  it("names the Responses field when a translated provider refuses the chat request, as OpenAI's Responses API does", async () => {
    // The chat provider says `messages`, a field of the chat request the gateway made, not of the client's.
    upstream.enqueue({ status: 400, body: openAIErrors.contextLengthExceeded() });
    const tooLong: any = await client.responses.create({ model: 'gpt-4o', input: 'Hi' }).catch((e) => e);
    expect(tooLong.status).toBe(400);
    expect(tooLong.error).toMatchObject({ code: 'context_length_exceeded', param: 'input' });
    const tooMany = {
      message: 'max_tokens is too large: 100000. This model supports at most 16384 completion tokens.',
      type: 'invalid_request_error',
      param: 'max_tokens',
      code: 'invalid_value',
    };
    upstream.enqueue({ status: 400, body: { error: tooMany } });
    await expect400(
      client.responses.create({ model: 'gpt-4o', input: 'Hi', max_output_tokens: 100000 }),
      'max_output_tokens',
    );
  });

  it('refuses to continue a response still in progress, whose answer the next turn would lack', async () => {
    upstream.enqueue({ text: 'one two three four five six', chunkDelayMs: 100 });
    const stream = await client.responses.create({ model: 'gpt-4o', input: 'Talk', stream: true });
    const iterator = stream[Symbol.asyncIterator]();
    const created: any = (await iterator.next()).value;
    expect(created.type).toBe('response.created');
    const sent = upstream.requests.length;
    const error: any = await client.responses
      .create({ model: 'gpt-4o', input: 'And?', previous_response_id: created.response.id })
      .catch((e) => e);
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ param: 'previous_response_id' });
    expect(error.error.message).toContain('in_progress');
    expect(upstream.requests).toHaveLength(sent);
    while (!(await iterator.next()).done);
    const next = await client.responses.create({
      model: 'gpt-4o',
      input: 'And?',
      previous_response_id: created.response.id,
    });
    expect(next.status).toBe('completed');
  });

  it('echoes a function tool given without strict or parameters as the Response shows one: strict', async () => {
    const tools = [{ type: 'function', name: 'now', description: 'The time' }] as any;
    const response = await client.responses.create({ model: 'gpt-4o', input: 'Time?', tools });
    expectOpenAPIValid('Response', response);
    expect(response.tools).toEqual([
      // A function without arguments is one strict mode takes (OpenAI's Responses API makes it strict).
      { type: 'function', name: 'now', description: 'The time', parameters: null, strict: true },
    ]);
    const events = await collect(
      await client.responses.create({ model: 'gpt-4o', input: 'Time?', tools, stream: true }),
    );
    expect(events[0].response.tools).toEqual(response.tools);
  });

  it("echoes the request's text settings whole, its verbosity with its format", async () => {
    const response = await client.responses.create({
      model: 'gpt-4o',
      input: 'Hi',
      text: { verbosity: 'low' },
    });
    expectOpenAPIValid('Response', response);
    expect(response.text).toEqual({ format: { type: 'text' }, verbosity: 'low' });
    expect((await client.responses.retrieve(response.id)).text).toEqual(response.text);
  });

  it('refuses a conversation object, which it does not keep, before any provider is called', async () => {
    for (const conversation of ['conv_123', { id: 'conv_123' }]) {
      await expect400(
        client.responses.create({ model: 'gpt-4o', input: 'Hi', conversation }),
        'conversation',
        /previous_response_id/,
      );
    }
    expect(upstream.requests).toHaveLength(0);
    // null is no conversation.
    const response = await client.responses.create({ model: 'gpt-4o', input: 'Hi', conversation: null });
    expect(response.status).toBe('completed');
  });

  it('refuses an item_reference, which no provider could resolve, rather than leave the item out', async () => {
    const first = await client.responses.create({ model: 'gpt-4o', input: 'Hi' });
    upstream.reset();
    await expect400(
      client.responses.create({
        model: 'gpt-4o',
        input: [
          { role: 'user', content: 'Hi' },
          { type: 'item_reference', id: first.output[0]!.id! },
        ],
      }),
      'input[1].type',
      /item_reference/,
    );
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('truncation', () => {
  // gpt-3.5-turbo's window is 16,385 tokens: about 65,000 characters.
  const long = 'x'.repeat(30_000);

  async function longConversation(): Promise<string> {
    let previous: string | undefined;
    for (let turn = 0; turn < 2; turn++) {
      upstream.enqueue({ text: 'ok' });
      const response = await client.responses.create({
        model: 'gpt-4o',
        input: `${turn} ${long}`,
        previous_response_id: previous,
      });
      previous = response.id;
    }
    return previous!;
  }

  it('disabled (the default): an input over the context window is a 400', async () => {
    const previous = await longConversation();
    await expect400(
      client.responses.create({ model: 'gpt-3.5-turbo', input: `2 ${long}`, previous_response_id: previous }),
      'input',
      /context window/,
    );
  });

  it('a max_output_tokens that fills the window is refused as such, truncation or not', async () => {
    for (const truncation of ['disabled', 'auto'] as const) {
      await expect400(
        client.responses.create({
          model: 'gpt-3.5-turbo',
          input: 'Hi',
          max_output_tokens: 20_000,
          truncation,
        }),
        'max_output_tokens',
        /max_output_tokens \(20000\) leaves no room/,
      );
    }
  });

  it('counts an image or a PDF sent inline as what the model reads, not as its base64 text', async () => {
    // A photo of about 600 KB: some 800,000 characters of base64, a few hundred tokens of gpt-4o's window.
    const photo = `data:image/jpeg;base64,${'A'.repeat(800_000)}`;
    const response = await client.responses.create({
      model: 'gpt-4o',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is in this picture?' },
            { type: 'input_image', image_url: photo, detail: 'auto' },
          ],
        },
      ],
    });
    expect(response.status).toBe('completed');
    expect(sentBody().messages[0].content[1].image_url.url).toBe(photo);
    // A one-page PDF of the same size (a scanned page) is a page.
    const pdf = Buffer.from(`%PDF-1.7\n1 0 obj << /Type /Page >> endobj\n${'x'.repeat(600_000)}`);
    const withFile = await client.responses.create({
      model: 'gpt-4o',
      input: [
        {
          role: 'user',
          content: [
            {
              type: 'input_file',
              filename: 'scan.pdf',
              file_data: `data:application/pdf;base64,${pdf.toString('base64')}`,
            },
          ],
        },
      ],
    });
    expect(withFile.status).toBe('completed');
    // Text over the window is still refused.
    await expect400(client.responses.create({ model: 'gpt-4o', input: 'x'.repeat(600_000) }), 'input');
  });

  it('auto: the oldest items are dropped until it fits', async () => {
    const previous = await longConversation();
    const response = await client.responses.create({
      model: 'gpt-3.5-turbo',
      input: `2 ${long}`,
      previous_response_id: previous,
      truncation: 'auto',
    });
    expect(response.status).toBe('completed');
    const messages = sentBody().messages as any[];
    expect(messages[0]).toMatchObject({ role: 'user' });
    expect(messages[0].content[0].text.startsWith('1 ')).toBe(true);
    expect(messages.at(-1).content[0].text.startsWith('2 ')).toBe(true);
  });
});

describe('context windows set by the operator', () => {
  it('GATEWAY_CONTEXT_WINDOWS comes before the built-in table', async () => {
    const small = await startGateway({ env: { GATEWAY_CONTEXT_WINDOWS: '{"gpt-4o-tiny":100}' } });
    try {
      const tiny = gatewayOpenAI(small, {
        provider: 'openai',
        api_key: 'sk-up',
        custom_host: upstream.url,
      });
      await expect400(tiny.responses.create({ model: 'gpt-4o-tiny', input: 'y'.repeat(600) }), 'input');
      // gpt-4o's own window is untouched.
      expect((await tiny.responses.create({ model: 'gpt-4o', input: 'y'.repeat(600) })).status).toBe(
        'completed',
      );
    } finally {
      await small.close();
    }
  });

  it('a malformed setting stops the start', () => {
    expect(() => loadSettings({ GATEWAY_CONTEXT_WINDOWS: '{"m":-1}' })).toThrow(/GATEWAY_CONTEXT_WINDOWS/);
    expect(() => loadSettings({ GATEWAY_CONTEXT_WINDOWS: '[1]' })).toThrow(/JSON object/);
  });
});

describe('the input item list', () => {
  it('pages by limit, order, after and before', async () => {
    const input = Array.from({ length: 5 }, (_, i) => ({ role: 'user' as const, content: `item ${i}` }));
    const response = await client.responses.create({ model: 'gpt-4o', input });
    const texts = (page: any) => page.data.map((item: any) => item.content[0].text);

    const all = await client.responses.inputItems.list(response.id);
    expectOpenAPIValid('ResponseItemList', (all as any).body);
    expect(texts(all)).toEqual(['item 0', 'item 1', 'item 2', 'item 3', 'item 4']);
    const ids = all.data.map((item) => item.id);

    const first = await client.responses.inputItems.list(response.id, { limit: 2, order: 'asc' });
    expect(texts(first)).toEqual(['item 0', 'item 1']);
    expect((first as any).body).toMatchObject({ has_more: true, first_id: ids[0], last_id: ids[1] });
    const next = await client.responses.inputItems.list(response.id, {
      limit: 2,
      order: 'asc',
      after: ids[1],
    });
    expect(texts(next)).toEqual(['item 2', 'item 3']);
    const desc = await client.responses.inputItems.list(response.id, { limit: 2, order: 'desc' });
    expect(texts(desc)).toEqual(['item 4', 'item 3']);
    const before = await gateway.server.app.inject({
      method: 'GET',
      url: `/v1/responses/${response.id}/input_items?before=${ids[3]}&limit=100`,
      headers: { 'x-gateway-api-key': gateway.adminKey },
    });
    expect(before.json().data.map((item: any) => item.content[0].text)).toEqual([
      'item 0',
      'item 1',
      'item 2',
    ]);
    expect(before.json().has_more).toBe(false);
    // `before` pages back: the page just before the cursor, in the list's order, not the list's start.
    const page = async (query: string) =>
      (
        await gateway.server.app.inject({
          method: 'GET',
          url: `/v1/responses/${response.id}/input_items?${query}`,
          headers: { 'x-gateway-api-key': gateway.adminKey },
        })
      ).json();
    const previous = await page(`limit=2&before=${ids[3]}`);
    expect(texts(previous)).toEqual(['item 1', 'item 2']);
    expect(previous).toMatchObject({ has_more: true, first_id: ids[1], last_id: ids[2] });
    const previousDesc = await page(`limit=2&order=desc&before=${ids[1]}`);
    expect(texts(previousDesc)).toEqual(['item 3', 'item 2']);
    expect(previousDesc.has_more).toBe(true);
    expect(texts(await page(`limit=2&after=${ids[0]}&before=${ids[4]}`))).toEqual(['item 1', 'item 2']);

    // Every page through the SDK's auto-pagination.
    const paged: string[] = [];
    for await (const item of client.responses.inputItems.list(response.id, { limit: 2, order: 'asc' }))
      paged.push((item as any).content[0].text);
    expect(paged).toHaveLength(5);

    for (const [query, param] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['order=sideways', 'order'],
      ['include=nonsense', 'include'],
      // A cursor that is no item of this response (a typo, another response's item) is not the start.
      ['after=msg_unknown', 'after'],
      ['before=msg_unknown', 'before'],
    ]) {
      const bad = await gateway.server.app.inject({
        method: 'GET',
        url: `/v1/responses/${response.id}/input_items?${query}`,
        headers: { 'x-gateway-api-key': gateway.adminKey },
      });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error.param).toBe(param);
    }
  });

  it('lists a function call and its output as items with a status', async () => {
    const response = await client.responses.create({
      model: 'gpt-4o',
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '{"celsius":21}' },
      ],
      tools: [weather],
    });
    const items = await client.responses.inputItems.list(response.id);
    expectOpenAPIValid('ResponseItemList', (items as any).body);
    expect(items.data.map((item: any) => [item.type, item.status])).toEqual([
      ['message', 'completed'],
      ['function_call', 'completed'],
      ['function_call_output', 'completed'],
    ]);
  });

  it("lists an assistant message of the input as an output message, its text's annotations included", async () => {
    const response = await client.responses.create({
      model: 'gpt-4o',
      input: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello.' },
        { role: 'assistant', content: [{ type: 'output_text', text: 'How can I help?' }] } as any,
        { role: 'user', content: 'Weather?' },
      ],
    });
    const items = await client.responses.inputItems.list(response.id);
    expectOpenAPIValid('ResponseItemList', (items as any).body);
    expect((items.data[1] as any).content).toEqual([
      { type: 'output_text', text: 'Hello.', annotations: [], logprobs: [] },
    ]);
  });

  it("lists an image's detail as auto when the request left it out, as OpenAI does", async () => {
    const image = 'data:image/png;base64,iVBORw0KGgo=';
    const response = await client.responses.create({
      model: 'gpt-4o',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is this?' },
            { type: 'input_image', image_url: image },
          ],
        } as any,
      ],
    });
    const items = await client.responses.inputItems.list(response.id);
    expectOpenAPIValid('ResponseItemList', (items as any).body);
    expect((items.data[0] as any).content[1]).toEqual({
      type: 'input_image',
      image_url: image,
      detail: 'auto',
    });
  });

  it('is gone with its response', async () => {
    const response = await client.responses.create({ model: 'gpt-4o', input: 'Hi' });
    await client.responses.delete(response.id);
    const error: any = await client.responses.inputItems.list(response.id).catch((e) => e);
    expect(error.status).toBe(404);
    const again: any = await client.responses.delete(response.id).catch((e) => e);
    expect(again.status).toBe(404);
  });

  it('has nothing to cancel or stream again when answered in the foreground', async () => {
    const response = await client.responses.create({ model: 'gpt-4o', input: 'Hi' });
    upstream.reset();
    const error: any = await client.responses.cancel(response.id).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ param: 'response_id', type: 'invalid_request_error' });
    const missing: any = await client.responses.cancel('resp_nope').catch((e) => e);
    expect(missing.status).toBe(404);
    // The provider never issued the gateway's ids.
    expect(upstream.requests).toHaveLength(0);
    expect((await client.responses.retrieve(response.id)).status).toBe('completed');
    // Nor is one streamed again, which the SDK would read as an empty stream.
    const again: any = await client.responses.retrieve(response.id, { stream: true }).catch((e) => e);
    expect(again).toBeInstanceOf(OpenAI.APIError);
    expect(again.status).toBe(400);
    expect(again.error).toMatchObject({ param: 'stream' });
    const plain = await gateway.server.app.inject({
      method: 'GET',
      url: `/v1/responses/${response.id}?stream=false`,
      headers: { 'x-gateway-api-key': gateway.adminKey },
    });
    expect(plain.json().id).toBe(response.id);
  });

  it('stores nothing with store: false', async () => {
    const response = await client.responses.create({ model: 'gpt-4o', input: 'Hi', store: false });
    expect((response as any).store).toBe(false);
    const error: any = await client.responses.retrieve(response.id).catch((e) => e);
    expect(error.status).toBe(404);
  });
});
