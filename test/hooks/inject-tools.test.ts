/**
 * default.injectTools: the reference gateway's tool mutator, on chat requests before the call. Tools added
 * or put in place, flat function tools sent in chat's form, duplicates by name dropped, tool_choice presets,
 * validation naming the field, and the provider getting the tools through the gateway.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkParameterError } from '../../src/hooks/registry.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { client, target } from '../routing/support.js';
import { context, runCheck } from './support.js';

type Json = Record<string, unknown>;

const fn = (name: string, description = name) => ({
  type: 'function',
  function: { name, description, parameters: { type: 'object', properties: {} } },
});
const request = (extra: Json = {}): Json => ({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
});

async function inject(body: Json, parameters: Json, callType?: 'messages') {
  return runCheck('injectTools', context({ request: body, ...(callType ? { callType } : {}) }), parameters);
}

describe('default.injectTools, the check', () => {
  it("adds the tools after the request's own, and passes", async () => {
    const result = await inject(request({ tools: [fn('mine')] }), { tools: [fn('search')] });
    expect(result.verdict).toBe(true);
    expect(result.transformed).toEqual(request({ tools: [fn('mine'), fn('search')] }));
    expect(result.data).toEqual({ injectedCount: 1, totalTools: 2 });
  });

  it('takes a single tool, and a flat function tool, sending chat form', async () => {
    const flat = { type: 'function', name: 'lookup', description: 'd', parameters: { type: 'object' } };
    const result = await inject(request(), { tools: flat });
    expect(result.transformed?.tools).toEqual([
      { type: 'function', function: { name: 'lookup', description: 'd', parameters: { type: 'object' } } },
    ]);
  });

  it("drops a tool whose name an earlier one has, the request's first, unless dedupeByName is false", async () => {
    const body = request({ tools: [fn('search', 'theirs')] });
    expect((await inject(body, { tools: [fn('search', 'ours')] })).transformed?.tools).toEqual([
      fn('search', 'theirs'),
    ]);
    expect(
      (await inject(body, { tools: [fn('search', 'ours')], dedupeByName: false })).transformed?.tools,
    ).toEqual([fn('search', 'theirs'), fn('search', 'ours')]);
  });

  it("puts the tools in place of the request's with replaceExisting", async () => {
    const result = await inject(request({ tools: [fn('mine')] }), {
      tools: [fn('search')],
      replaceExisting: true,
    });
    expect(result.transformed?.tools).toEqual([fn('search')]);
  });

  it('sets tool_choice by preset when the request has none, or always with resetToolChoice', async () => {
    const choice = async (body: Json, parameters: Json) =>
      (await inject(body, { tools: [fn('search')], ...parameters })).transformed?.tool_choice;
    expect(await choice(request(), { toolChoicePreset: 'auto' })).toBe('auto');
    expect(await choice(request(), { toolChoicePreset: 'none' })).toBe('none');
    expect(await choice(request(), { toolChoicePreset: 'add_any' })).toBe('required');
    expect(await choice(request(), { toolChoicePreset: 'add_all', requiredFunctionName: 'search' })).toEqual({
      type: 'function',
      function: { name: 'search' },
    });
    expect(await choice(request(), { toolChoicePreset: 'add_any', requiredFunctionName: 'absent' })).toBe(
      'required',
    );
    expect(await choice(request({ tool_choice: 'none' }), { toolChoicePreset: 'auto' })).toBe('none');
    expect(
      await choice(request({ tool_choice: 'none' }), { toolChoicePreset: 'auto', resetToolChoice: true }),
    ).toBe('auto');
    expect(await choice(request(), {})).toBeUndefined();
  });

  it('leaves calls other than chat completions as they are', async () => {
    const result = await inject(request(), { tools: [fn('search')] }, 'messages');
    expect(result.verdict).toBe(true);
    expect(result.transformed).toBeUndefined();
  });

  it('is refused on the answer, without tools, or with a function tool without a name, naming the field', () => {
    const problem = (
      parameters: unknown,
      event: 'beforeRequestHook' | 'afterRequestHook' = 'beforeRequestHook',
    ) => checkParameterError('default.injectTools', parameters, event);
    expect(problem({ tools: [fn('a')] }, 'afterRequestHook')?.param).toBe('id');
    expect(problem({})?.message).toBe('default.injectTools: parameters.tools is required');
    expect(problem({ tools: [] })?.param).toMatch(/^parameters\.tools/);
    expect(problem({ tools: [fn('a'), { type: 'function', function: { description: 'x' } }] })?.param).toBe(
      'parameters.tools[1]',
    );
    expect(problem({ tools: { type: 'function' } })?.param).toBe('parameters.tools');
    expect(problem({ tools: [fn('a')], toolChoicePreset: 'any' })?.param).toBe('parameters.toolChoicePreset');
    expect(problem({ tools: [fn('a')], replaceExisting: 'yes' })?.param).toBe('parameters.replaceExisting');
  });
});

describe('default.injectTools through the gateway', () => {
  let gateway: TestGateway;
  let fake: FakeUpstream;

  beforeAll(async () => {
    [gateway, fake] = await Promise.all([startGateway(), startFakeOpenAI({ name: 'tooled' })]);
  });

  afterAll(async () => {
    await Promise.all([gateway?.close(), fake?.close()]);
  });

  it('the provider gets the injected tools and tool_choice', async () => {
    const config = {
      ...target(fake),
      before_request_hooks: [
        {
          id: 'tools',
          type: 'mutator',
          checks: [
            {
              id: 'default.injectTools',
              parameters: {
                tools: [fn('search')],
                toolChoicePreset: 'add_any',
                requiredFunctionName: 'search',
              },
            },
          ],
        },
      ],
    };
    await client(gateway, config).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'find it' }],
    });
    const sent = fake.requests.at(-1)?.body as Json;
    expect(sent.tools).toEqual([fn('search')]);
    expect(sent.tool_choice).toEqual({ type: 'function', function: { name: 'search' } });
  });
});
