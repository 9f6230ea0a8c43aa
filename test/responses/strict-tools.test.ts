/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// Strict function tools on the Responses API, as OpenAI's: a tool without `strict` is strict when its schema
// allows it (every object closed, every property required) and non-strict otherwise, the Response shows the
// mode used, every target is told it (chat `function.strict`, Anthropic's tool `strict`, OpenAI's own
// `strict`), and a tool that asks for strict with a schema strict mode cannot take is refused before any
// call, with OpenAI's error, whichever target would answer. The openai SDK against the gateway and fakes.
import type OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';

const ANTHROPIC_KEY = 'sk-ant-strict';

let gateway: TestGateway;
let upstream: FakeUpstream;
let anthropic: FakeAnthropic;
let chat: OpenAI;
let native: OpenAI;
let claude: OpenAI;

beforeAll(async () => {
  [gateway, upstream, anthropic] = await Promise.all([
    startGateway(),
    startFakeOpenAI({ name: 'strict' }),
    startFakeAnthropic({ apiKey: ANTHROPIC_KEY }),
  ]);
  chat = gatewayOpenAI(gateway, {
    provider: 'openai-compatible',
    api_key: 'sk-up',
    custom_host: upstream.url,
  });
  native = gatewayOpenAI(gateway, { provider: 'openai', api_key: 'sk-up', custom_host: upstream.url });
  claude = gatewayOpenAI(gateway, {
    provider: 'anthropic',
    api_key: ANTHROPIC_KEY,
    custom_host: anthropic.url,
  });
});

afterAll(async () => {
  await Promise.all([gateway?.close(), upstream?.close(), anthropic?.close()]);
});

beforeEach(() => upstream.reset());

const sentBody = () => upstream.requests.at(-1)!.body as any;

/** Closed, every property required: strict mode takes it. */
const closed = {
  type: 'object',
  properties: { city: { type: 'string' } },
  required: ['city'],
  additionalProperties: false,
};
/** An optional property: strict mode cannot take it as it is. */
const optional = {
  type: 'object',
  properties: { city: { type: 'string' }, units: { type: 'string' } },
  required: ['city'],
  additionalProperties: false,
};
const fn = (name: string, parameters: unknown, strict?: boolean) =>
  ({ type: 'function', name, parameters, ...(strict !== undefined && { strict }) }) as any;

async function refusal(promise: Promise<unknown>): Promise<any> {
  const error: any = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error?.status).toBe(400);
  return error.error;
}

describe('strict function tools', () => {
  it('runs a tool without strict strict when its schema allows it, shows so, and tells the provider', async () => {
    const tools = [
      fn('weather', closed),
      fn('forecast', optional),
      fn('now', undefined),
      fn('loose', optional, false),
    ];
    const response = await chat.responses.create({ model: 'gpt-4o', input: 'Weather?', tools });
    expectOpenAPIValid('Response', response);
    expect(response.tools.map((tool: any) => tool.strict)).toEqual([true, false, true, false]);
    expect(sentBody().tools.map((tool: any) => tool.function.strict)).toEqual([true, false, true, false]);

    const events: any[] = [];
    for await (const event of await chat.responses.create({
      model: 'gpt-4o',
      input: 'Weather?',
      tools,
      stream: true,
    }))
      events.push(event);
    expect(events[0].response.tools).toEqual(response.tools);
    expect((await chat.responses.retrieve(response.id)).tools).toEqual(response.tools);
  });

  it('tells Anthropic a tool runs strict, as its tool strict', async () => {
    const response = await claude.responses.create({
      model: 'claude-sonnet-4-5',
      input: 'Weather?',
      tools: [fn('weather', closed), fn('forecast', optional)],
    });
    expect(response.tools.map((tool: any) => tool.strict)).toEqual([true, false]);
    const sent = anthropic.requests.at(-1)!.body as any;
    expect(sent.tools.map((tool: any) => tool.strict)).toEqual([true, undefined]);
  });

  it('sends OpenAI the mode the Response shows', async () => {
    const response = await native.responses.create({
      model: 'gpt-4o',
      input: 'Weather?',
      tools: [fn('weather', closed), fn('forecast', optional), fn('loose', closed, false)],
    });
    expect(response.tools.map((tool: any) => tool.strict)).toEqual([true, false, false]);
    expect(upstream.requests.at(-1)!.path).toMatch(/\/responses$/);
    expect(sentBody().tools.map((tool: any) => tool.strict)).toEqual([true, false, false]);
  });

  it("refuses strict with a schema strict mode cannot take, with OpenAI's error, on every target", async () => {
    for (const client of [chat, native, claude]) {
      const error = await refusal(
        client.responses.create({
          model: 'gpt-4o',
          input: 'Weather?',
          tools: [fn('weather', closed, true), fn('forecast', optional, true)],
        }),
      );
      expect(error).toEqual({
        message:
          "Invalid schema for function 'forecast': In context=(), 'required' is required to be supplied and to " +
          "be an array including every key in properties. Missing 'units'.",
        type: 'invalid_request_error',
        param: 'tools[1].parameters',
        code: 'invalid_function_parameters',
      });
    }
    expect(upstream.requests).toHaveLength(0);
  });

  it('finds an open object anywhere in the schema, and a root that is no object', async () => {
    const nested = {
      type: 'object',
      properties: { place: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
      required: ['place'],
      additionalProperties: false,
    };
    let error = await refusal(
      chat.responses.create({ model: 'gpt-4o', input: 'Hi', tools: [fn('where', nested, true)] }),
    );
    expect(error.message).toBe(
      "Invalid schema for function 'where': In context=('properties', 'place'), 'additionalProperties' is " +
        'required to be supplied and to be false.',
    );
    const listed = { type: 'object', properties: { at: { type: 'array', items: nested.properties.place } } };
    error = await refusal(
      chat.responses.create({
        model: 'gpt-4o',
        input: 'Hi',
        tools: [fn('where', { ...listed, required: ['at'], additionalProperties: false }, true)],
      }),
    );
    expect(error.message).toContain("In context=('properties', 'at', 'items'), 'additionalProperties'");
    error = await refusal(
      chat.responses.create({ model: 'gpt-4o', input: 'Hi', tools: [fn('where', { type: 'string' }, true)] }),
    );
    expect(error).toMatchObject({
      param: 'tools[0].parameters',
      message: `Invalid schema for function 'where': schema must be a JSON Schema of 'type: "object"', got 'type: "string"'.`,
    });
    expect(upstream.requests).toHaveLength(0);

    // Without strict, the same schema runs non-strict.
    const response = await chat.responses.create({
      model: 'gpt-4o',
      input: 'Hi',
      tools: [fn('where', nested)],
    });
    expect(response.tools[0]!).toMatchObject({ strict: false });
    expect(sentBody().tools[0].function.strict).toBe(false);
  });
});
