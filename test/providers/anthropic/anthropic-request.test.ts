import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/core/errors.js';
import { anthropicAdapter, toAnthropicMessagesBody } from '../../../src/providers/anthropic/index.js';
import type { UpstreamRequest } from '../../../src/providers/types.js';
import { chatRequest } from './helpers.js';
import { buildRequest } from '../operations.js';
import { THINKING_HISTORY } from '../thinking-history.js';

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions dig into the wire body freely
type WireBody = Record<string, any>;

function build(body: Record<string, unknown>, overrides = {}): { req: UpstreamRequest; body: WireBody } {
  const req = buildRequest(anthropicAdapter, chatRequest(body, overrides)) as UpstreamRequest;
  return { req, body: JSON.parse(String(req.body)) };
}

function refusal(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }
  throw new Error('expected a GatewayError');
}

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

describe('anthropic request translation', () => {
  it('posts to /v1/messages with key, default version, and passes anthropic-beta on', () => {
    const { req } = build({}, { clientHeaders: { 'anthropic-beta': 'prompt-caching-2024-07-31' } });
    expect(req.method).toBe('POST');
    expect(req.url).toBe('https://api.anthropic.com/v1/messages');
    expect(req.headers['x-api-key']).toBe('sk-ant-test');
    expect(req.headers['anthropic-version']).toBe('2023-06-01');
    expect(req.headers['anthropic-beta']).toBe('prompt-caching-2024-07-31');
  });

  it("lets the client's anthropic-version win and custom_host replace the base URL", () => {
    const { req } = build(
      {},
      {
        clientHeaders: { 'anthropic-version': '2024-01-01' },
        target: { provider: 'anthropic', api_key: 'k', custom_host: 'http://127.0.0.1:9/base/' },
      },
    );
    expect(req.headers['anthropic-version']).toBe('2024-01-01');
    expect(req.url).toBe('http://127.0.0.1:9/base/v1/messages');
  });

  it('refuses a target without api_key, naming the key', () => {
    const error = refusal(() =>
      buildRequest(anthropicAdapter, chatRequest({}, { target: { provider: 'anthropic' } })),
    );
    expect(error.code).toBe('provider_config_error');
    expect(error.param).toBe('api_key');
  });

  it('refuses embeddings with a clear 400', () => {
    const error = refusal(() =>
      buildRequest(anthropicAdapter, {
        ...chatRequest({}),
        endpoint: 'embeddings',
        body: { model: 'x', input: 'a' },
      }),
    );
    expect(error.status).toBe(400);
    expect(error.code).toBe('unsupported_endpoint');
  });

  it('hoists system and developer messages, keeps cache_control, and defaults max_tokens', () => {
    const { body } = build({
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'developer',
          content: [{ type: 'text', text: 'Long context', cache_control: { type: 'ephemeral' } }],
        },
        { role: 'user', content: 'Hello' },
      ],
    });
    expect(body.model).toBe('claude-sonnet-4-5');
    expect(body.max_tokens).toBe(4096);
    expect(body.system).toEqual([
      { type: 'text', text: 'Be brief.' },
      { type: 'text', text: 'Long context', cache_control: { type: 'ephemeral' } },
    ]);
    expect(body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }]);
  });

  // LiteLLM's and Portkey's extension: cache_control on a whole message marks its last block.
  it("puts a message's cache_control on its last block, a tool message's on its result", () => {
    const cache = { type: 'ephemeral', ttl: '1h' };
    const { body } = build({
      messages: [
        { role: 'system', content: 'Long rules.', cache_control: cache },
        { role: 'user', content: 'Weather?', cache_control: cache },
        {
          role: 'assistant',
          content: 'Looking.',
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
          ],
          cache_control: cache,
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny', cache_control: cache },
      ],
      tools: [weatherTool],
    });
    expect(body.system).toEqual([{ type: 'text', text: 'Long rules.', cache_control: cache }]);
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather?', cache_control: cache }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking.' },
          {
            type: 'tool_use',
            id: 'call_1',
            name: 'get_weather',
            input: { city: 'Paris' },
            cache_control: cache,
          },
        ],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'sunny', cache_control: cache }],
      },
    ]);
  });

  // Anthropic takes at most 4 breakpoints and reads them tools, then system (system and developer messages,
  // wherever they are), then messages: a fifth is refused naming the chat field it came from.
  it('refuses a fifth cache_control breakpoint, counted in the order Anthropic reads them', () => {
    const cache = { type: 'ephemeral' };
    const messages = [
      { role: 'system', content: 'Rules.', cache_control: cache },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Document.', cache_control: cache },
          { type: 'text', text: 'Appendix.', cache_control: cache },
        ],
      },
      { role: 'developer', content: 'More rules.', cache_control: cache },
    ];
    const tools = [{ ...weatherTool, cache_control: cache }];
    const error = refusal(() => build({ messages, tools }));
    expect(error.status).toBe(400);
    expect(error.param).toBe('messages[1].content[1].cache_control');
    expect(error.message).toContain('a maximum of 4 blocks with cache_control');
    // A message's mark on a part that has its own is one breakpoint, not two.
    const { body } = build({
      messages: [{ ...messages[1], cache_control: cache }, messages[0], messages[2]],
    });
    expect(JSON.stringify(body).match(/cache_control/g)).toHaveLength(4);
  });

  it('refuses a breakpoint kept an hour after one kept five minutes, naming its ttl', () => {
    const hour = { type: 'ephemeral', ttl: '1h' };
    const error = refusal(() =>
      build({
        messages: [
          { role: 'system', content: 'Rules.', cache_control: hour },
          { role: 'user', content: 'Hi' },
        ],
        tools: [{ ...weatherTool, cache_control: { type: 'ephemeral' } }],
      }),
    );
    expect(error.status).toBe(400);
    expect(error.param).toBe('messages[0].cache_control.ttl');
    // A developer message later in the chat is read first, as system: an hour there is before five minutes.
    const { body } = build({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral' } }] },
        { role: 'developer', content: 'Rules.', cache_control: hour },
      ],
    });
    expect(body.system).toEqual([{ type: 'text', text: 'Rules.', cache_control: hour }]);
  });

  it('maps sampling parameters, stop, user, stream; drops seed; max_completion_tokens wins', () => {
    const { body } = build({
      temperature: 0.2,
      top_p: 0.9,
      stop: 'END',
      user: 'user-42',
      seed: 7,
      max_tokens: 100,
      max_completion_tokens: 200,
      stream: true,
    });
    expect(body).toMatchObject({
      temperature: 0.2,
      top_p: 0.9,
      stop_sequences: ['END'],
      metadata: { user_id: 'user-42' },
      max_tokens: 200,
      stream: true,
    });
    expect(body.seed).toBeUndefined();
    expect(build({ stop: ['a', 'b'] }).body.stop_sequences).toEqual(['a', 'b']);
  });

  it.each([
    ['frequency_penalty', 0.5],
    ['presence_penalty', 1],
    ['logit_bias', { '50256': -100 }],
    ['logprobs', true],
    ['top_logprobs', 3],
  ])('refuses %s naming the parameter', (name, value) => {
    const error = refusal(() => build({ [name]: value }));
    expect(error.code).toBe('unsupported_parameter');
    expect(error.param).toBe(name);
  });

  it('accepts unsupported parameters at their neutral value', () => {
    expect(() => build({ frequency_penalty: 0, logprobs: false })).not.toThrow();
  });

  it('translates URL and data URL images', () => {
    const { body } = build({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          ],
        },
      ],
    });
    expect(body.messages[0].content).toEqual([
      { type: 'text', text: 'What is this?' },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
    ]);
  });

  it('refuses an unsupported image type naming the content part', () => {
    const error = refusal(() =>
      build({
        messages: [
          {
            role: 'user',
            content: [{ type: 'image_url', image_url: { url: 'data:image/tiff;base64,AAAA' } }],
          },
        ],
      }),
    );
    expect(error.param).toBe('messages[0].content[0].image_url');
  });

  it('translates tools and every tool_choice', () => {
    const cases: Array<[unknown, unknown]> = [
      ['auto', undefined],
      ['none', { type: 'none' }],
      ['required', { type: 'any' }],
      [
        { type: 'function', function: { name: 'get_weather' } },
        { type: 'tool', name: 'get_weather' },
      ],
    ];
    for (const [choice, expected] of cases) {
      const { body } = build({
        tools: [{ ...weatherTool, cache_control: { type: 'ephemeral' } }],
        tool_choice: choice,
      });
      expect(body.tools).toEqual([
        {
          name: 'get_weather',
          description: 'Weather of a city',
          input_schema: weatherTool.function.parameters,
          cache_control: { type: 'ephemeral' },
        },
      ]);
      expect(body.tool_choice).toEqual(expected);
    }
  });

  it('offers only the tools of an allowed_tools choice, its mode as the choice', () => {
    const timeTool = { type: 'function', function: { name: 'get_time', parameters: { type: 'object' } } };
    const required = build({
      tools: [weatherTool, timeTool],
      tool_choice: {
        type: 'allowed_tools',
        allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'get_time' } }] },
      },
    }).body;
    expect(required.tools.map((tool: WireBody) => tool.name)).toEqual(['get_time']);
    expect(required.tool_choice).toEqual({ type: 'any' });
    const auto = build({
      tools: [weatherTool, timeTool],
      tool_choice: {
        type: 'allowed_tools',
        allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'get_time' } }] },
      },
    }).body;
    expect(auto.tools.map((tool: WireBody) => tool.name)).toEqual(['get_time']);
    expect(auto.tool_choice).toBeUndefined();
    const error = refusal(() =>
      build({
        tools: [weatherTool],
        tool_choice: {
          type: 'allowed_tools',
          allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'nope' } }] },
        },
      }),
    );
    expect(error.param).toBe('tool_choice.allowed_tools.tools[0]');
  });

  it('maps parallel_tool_calls false to disable_parallel_tool_use', () => {
    expect(build({ tools: [weatherTool], parallel_tool_calls: false }).body.tool_choice).toEqual({
      type: 'auto',
      disable_parallel_tool_use: true,
    });
    expect(
      build({ tools: [weatherTool], tool_choice: 'required', parallel_tool_calls: false }).body.tool_choice,
    ).toEqual({
      type: 'any',
      disable_parallel_tool_use: true,
    });
  });

  it('sends history with tool calls back, merging tool results into one user turn', () => {
    const { body } = build({
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            {
              id: 'toolu_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
            {
              id: 'toolu_2',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Rome"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: 'Sunny' },
        { role: 'tool', tool_call_id: 'toolu_2', content: [{ type: 'text', text: 'Rainy' }] },
        { role: 'user', content: 'Thanks, summarise.' },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { city: 'Rome' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'Sunny' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'Rainy' }] },
          { type: 'text', text: 'Thanks, summarise.' },
        ],
      },
    ]);
  });

  it('refuses tool call arguments that are not JSON, naming them', () => {
    const error = refusal(() =>
      build({
        messages: [
          { role: 'user', content: 'x' },
          {
            role: 'assistant',
            tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{bad' } }],
          },
        ],
      }),
    );
    expect(error.param).toBe('messages[1].tool_calls[0].function.arguments');
  });

  it('maps response_format json_schema to output_config.format', () => {
    const schema = {
      type: 'object',
      properties: { a: { type: 'string' } },
      required: ['a'],
      additionalProperties: false,
    };
    const { body } = build({
      response_format: { type: 'json_schema', json_schema: { name: 'thing', schema } },
    });
    expect(body.output_config).toEqual({ format: { type: 'json_schema', schema } });
  });

  it('maps response_format json_object to a forced json tool', () => {
    const { body } = build({ response_format: { type: 'json_object' } });
    expect(body.tools).toHaveLength(1);
    expect(body.tools[0].name).toBe('json');
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'json' });
  });

  it('maps thinking, leaves room above the budget, and sends signed thinking back', () => {
    const { body } = build({
      thinking: { type: 'enabled', budget_tokens: 2048 },
      messages: [
        { role: 'user', content: '925 / 5?' },
        {
          role: 'assistant',
          content: '185',
          content_blocks: [
            { type: 'thinking', thinking: '925 / 5 = 185', signature: 'sig-1' },
            { type: 'redacted_thinking', data: 'opaque' },
            { type: 'text', text: '185' },
          ],
        },
        { role: 'user', content: 'Times 2?' },
      ],
    });
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(body.max_tokens).toBe(2048 + 4096);
    expect(body.messages[1].content).toEqual([
      { type: 'thinking', thinking: '925 / 5 = 185', signature: 'sig-1' },
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'text', text: '185' },
    ]);
  });

  it('sends thinking content parts back as thinking blocks before the tool_use', () => {
    const { body } = build({
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tools: [weatherTool],
      messages: THINKING_HISTORY,
    });
    expect(body.messages[1].content).toEqual([
      { type: 'thinking', thinking: 'I should call the tool.', signature: 'sig-abc' },
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} },
    ]);
  });

  it('leaves the model out of the body on request, for hosts that put it in the URL', () => {
    const body = toAnthropicMessagesBody(chatRequest({}), { includeModel: false });
    expect(body.model).toBeUndefined();
    expect(body.messages).toBeDefined();
  });
});
