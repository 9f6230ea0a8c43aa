/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// Parallel function calls of a translated stream, through the openai SDK's responses.stream(): a chat stream
// tells each call's deltas by the call's index, and nothing in its grammar keeps one call's deltas together,
// so a server may send every call's id and name first and their arguments after. Each call must still be
// one function_call item, with its own name, call id and arguments.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';
import { startWireUpstream, type WireUpstream } from '../helpers/wire-upstream.js';

let gateway: TestGateway;
let upstream: WireUpstream;
let answer: Array<{ data: string }> = [];
/** The whole answer to a request that is not streamed. */
let completion: unknown;

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

/** Two calls opened in one chunk, their arguments in the next, both in pieces. */
const INTERLEAVED = [
  chunk({ role: 'assistant', content: null }),
  chunk({
    tool_calls: [
      { index: 0, id: 'call_paris', type: 'function', function: { name: 'get_weather', arguments: '' } },
      { index: 1, id: 'call_rome', type: 'function', function: { name: 'get_time', arguments: '' } },
    ],
  }),
  chunk({
    tool_calls: [
      { index: 0, function: { arguments: '{"city":' } },
      { index: 1, function: { arguments: '{"zone":' } },
    ],
  }),
  chunk({
    tool_calls: [
      { index: 1, function: { arguments: '"CET"}' } },
      { index: 0, function: { arguments: '"Paris"}' } },
    ],
  }),
  chunk({}, 'tool_calls'),
  chunk({}, null, { prompt_tokens: 40, completion_tokens: 20, total_tokens: 60 }),
];

/** The usual order: each call whole before the next. */
const ONE_AFTER_ANOTHER = [
  chunk({ role: 'assistant', content: null }),
  chunk({
    tool_calls: [
      { index: 0, id: 'call_paris', type: 'function', function: { name: 'get_weather', arguments: '' } },
    ],
  }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":"Paris"}' } }] }),
  chunk({
    tool_calls: [
      { index: 1, id: 'call_rome', type: 'function', function: { name: 'get_time', arguments: '' } },
    ],
  }),
  chunk({ tool_calls: [{ index: 1, function: { arguments: '{"zone":"CET"}' } }] }),
  chunk({}, 'tool_calls'),
  chunk({}, null, { prompt_tokens: 40, completion_tokens: 20, total_tokens: 60 }),
];

const TOOLS = [
  { type: 'function' as const, name: 'get_weather', parameters: { type: 'object' }, strict: false },
  { type: 'function' as const, name: 'get_time', parameters: { type: 'object' }, strict: false },
];

beforeAll(async () => {
  upstream = await startWireUpstream(({ body }) =>
    body.stream ? { events: answer, done: true } : { json: JSON.stringify(completion) },
  );
  gateway = await startGateway();
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

const client = () =>
  gatewayOpenAI(gateway, { provider: 'groq', api_key: 'gsk-test', custom_host: upstream.url });

describe('parallel function calls streamed interleaved', () => {
  it('are one function_call item each, their arguments whole', async () => {
    answer = INTERLEAVED;
    const stream = client().responses.stream({
      model: 'llama-3.3-70b-versatile',
      input: 'Weather in Paris, time in Rome',
      tools: TOOLS,
    });
    const events: any[] = [];
    for await (const event of stream) {
      expectOpenAPIValid('ResponseStreamEvent', event);
      events.push(event);
    }
    const response = await stream.finalResponse();
    const expected = [
      { type: 'function_call', call_id: 'call_paris', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call', call_id: 'call_rome', name: 'get_time', arguments: '{"zone":"CET"}' },
    ];
    expect(response.output).toMatchObject(expected);
    expect(response.output).toHaveLength(2);
    expect(response.status).toBe('completed');

    // Each call is added once and done once, its deltas and its done event on its own item.
    const added = events.filter((e) => e.type === 'response.output_item.added');
    expect(added.map((e) => [e.output_index, e.item.call_id])).toEqual([
      [0, 'call_paris'],
      [1, 'call_rome'],
    ]);
    const done = events.filter((e) => e.type === 'response.function_call_arguments.done');
    expect(done.map((e) => [e.item_id, e.name, e.arguments])).toEqual([
      [added[0].item.id, 'get_weather', '{"city":"Paris"}'],
      [added[1].item.id, 'get_time', '{"zone":"CET"}'],
    ]);
    for (const delta of events.filter((e) => e.type === 'response.function_call_arguments.delta')) {
      expect(delta.item_id).toBe(added[delta.output_index].item.id);
    }
    expect(events.filter((e) => e.type === 'response.output_item.done')).toHaveLength(2);

    const stored = await client().responses.retrieve(response.id);
    expect(stored.output).toMatchObject(expected);
  });

  it('are each done before the next is added when sent one after another', async () => {
    answer = ONE_AFTER_ANOTHER;
    const stream = client().responses.stream({
      model: 'llama-3.3-70b-versatile',
      input: 'Weather in Paris, time in Rome',
      tools: TOOLS,
    });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types.slice(2, -1)).toEqual([
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
    ]);
    expect((await stream.finalResponse()).output).toMatchObject([
      { call_id: 'call_paris', arguments: '{"city":"Paris"}', status: 'completed' },
      { call_id: 'call_rome', arguments: '{"zone":"CET"}', status: 'completed' },
    ]);
  });
});

describe('a function call without arguments', () => {
  // A call of a tool that takes nothing: the chat stream gives its id and name and never any arguments text.
  const NO_ARGUMENTS = [
    chunk({ role: 'assistant', content: null }),
    chunk({
      tool_calls: [
        { index: 0, id: 'call_now', type: 'function', function: { name: 'get_now', arguments: '' } },
      ],
    }),
    chunk({}, 'tool_calls'),
    chunk({}, null, { prompt_tokens: 40, completion_tokens: 5, total_tokens: 45 }),
  ];
  // Strict, so that the SDK parses the call's arguments (JSON.parse of '' throws).
  const STRICT = [
    {
      type: 'function' as const,
      name: 'get_now',
      parameters: { type: 'object', properties: {}, required: [], additionalProperties: false },
      strict: true,
    },
  ];

  it('has arguments {} when streamed, as OpenAI answers such a call', async () => {
    answer = NO_ARGUMENTS;
    const stream = client().responses.stream({
      model: 'llama-3.3-70b-versatile',
      input: 'What time is it?',
      tools: STRICT,
    });
    const events: any[] = [];
    for await (const event of stream) {
      expectOpenAPIValid('ResponseStreamEvent', event);
      events.push(event);
    }
    const response = await stream.finalResponse();
    expect(response.output).toMatchObject([
      { type: 'function_call', call_id: 'call_now', name: 'get_now', arguments: '{}', status: 'completed' },
    ]);
    expect((response.output[0] as any).parsed_arguments).toEqual({});
    // The deltas add up to the done event's arguments, as a client joining them expects.
    const deltas = events.filter((e) => e.type === 'response.function_call_arguments.delta');
    expect(deltas.map((e) => e.delta).join('')).toBe('{}');
    const done = events.filter((e) => e.type === 'response.function_call_arguments.done');
    expect(done.map((e) => e.arguments)).toEqual(['{}']);
    const itemDone = events.filter((e) => e.type === 'response.output_item.done');
    expect(itemDone.map((e) => e.item.arguments)).toEqual(['{}']);

    const stored = await client().responses.retrieve(response.id);
    expect(stored.output).toMatchObject([{ call_id: 'call_now', arguments: '{}' }]);
  });

  it('has arguments {} when not streamed', async () => {
    completion = {
      id: 'chatcmpl-now',
      object: 'chat.completion',
      created: 1_770_000_000,
      model: 'llama-3.3-70b-versatile',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_now', type: 'function', function: { name: 'get_now', arguments: '' } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 40, completion_tokens: 5, total_tokens: 45 },
    };
    const response = await client().responses.parse({
      model: 'llama-3.3-70b-versatile',
      input: 'What time is it?',
      tools: STRICT,
    });
    expect(response.output).toMatchObject([
      { type: 'function_call', call_id: 'call_now', name: 'get_now', arguments: '{}', status: 'completed' },
    ]);
    expect((response.output[0] as any).parsed_arguments).toEqual({});
  });
});
