import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/core/errors.js';
import { cohereAdapter } from '../../../src/providers/cohere/index.js';
import type { UpstreamRequest } from '../../../src/providers/types.js';
import { cohereRequest } from './helpers.js';
import { buildRequest } from '../operations.js';

const tools = [
  { type: 'function', function: { name: 'weather', description: 'Weather', parameters: { type: 'object' } } },
  { type: 'function', function: { name: 'cityAttractions', parameters: { type: 'object' } } },
];

// Upstream bodies are read as loose JSON: the assertions below state their shape.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type LooseJson = any;

async function build(body: Record<string, unknown>, options: Parameters<typeof cohereRequest>[1] = {}) {
  const upstream = (await buildRequest(cohereAdapter, cohereRequest(body, options))) as UpstreamRequest;
  return { upstream, body: JSON.parse(String(upstream.body)) as Record<string, LooseJson> };
}

function refusal(body: Record<string, unknown>): GatewayError {
  try {
    buildRequest(cohereAdapter, cohereRequest(body));
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }
  throw new Error('the request was not refused');
}

describe('Cohere chat request', () => {
  it('posts to /v2/chat with a bearer key, on custom_host when given', async () => {
    const { upstream } = await build({
      model: 'command-a-03-2025',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(upstream.method).toBe('POST');
    expect(upstream.url).toBe('https://api.cohere.com/v2/chat');
    expect(upstream.headers.authorization).toBe('Bearer co-test-key');
    const local = await build(
      { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true },
      { target: { custom_host: 'http://127.0.0.1:9999/' } },
    );
    expect(local.upstream.url).toBe('http://127.0.0.1:9999/v2/chat');
    expect(local.upstream.headers.accept).toBe('text/event-stream');
    expect(local.body.stream).toBe(true);
  });

  it('refuses a target without api_key, naming the key', () => {
    expect(() =>
      buildRequest(
        cohereAdapter,
        cohereRequest({ model: 'm', messages: [] }, { target: { api_key: undefined } }),
      ),
    ).toThrowError(expect.objectContaining({ code: 'provider_config_error', param: 'api_key' }));
  });

  it('translates system, developer, multi-turn history, images and tool results', async () => {
    const { body } = await build({
      model: 'command-a-vision-07-2025',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"c":"Paris"}' } },
          ],
          content_blocks: [{ type: 'thinking', thinking: 'I will look up the weather.' }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
        { role: 'assistant', content: 'It is 21°C.' },
        { role: 'user', content: 'Thanks' },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'system', content: 'Answer in French.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      },
      {
        role: 'assistant',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"c":"Paris"}' } },
        ],
        tool_plan: 'I will look up the weather.',
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
      { role: 'assistant', content: 'It is 21°C.' },
      { role: 'user', content: 'Thanks' },
    ]);
  });

  it("joins a tool result's text parts one line each, never run together", async () => {
    const { body } = await build({
      model: 'm',
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'w', arguments: '{}' } }],
        },
        {
          role: 'tool',
          tool_call_id: 'call_1',
          content: [
            { type: 'text', text: '21C' },
            { type: 'text', text: 'sunny' },
          ],
        },
      ],
    });
    expect((body.messages as Array<{ content: unknown }>)[2]!.content).toBe('21C\nsunny');
  });

  it('maps sampling parameters, stop, max tokens, seed and penalties', async () => {
    const { body } = await build({
      model: 'command-a-03-2025',
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0.3,
      top_p: 0.9,
      max_tokens: 50,
      max_completion_tokens: 70,
      stop: 'END',
      seed: 7,
      frequency_penalty: 0.5,
      presence_penalty: -0.5,
      n: 3,
      user: 'u-1',
      parallel_tool_calls: false,
      stream_options: { include_usage: true },
    });
    expect(body).toEqual({
      model: 'command-a-03-2025',
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0.3,
      p: 0.9,
      max_tokens: 70,
      stop_sequences: ['END'],
      seed: 7,
      frequency_penalty: 0.5,
      presence_penalty: -0.5,
    });
  });

  it('maps tools and every tool_choice', async () => {
    const auto = await build({ model: 'm', messages: [], tools, tool_choice: 'auto' });
    expect(auto.body.tools).toEqual(tools);
    expect(auto.body.tool_choice).toBeUndefined();
    expect((await build({ model: 'm', messages: [], tools, tool_choice: 'none' })).body.tool_choice).toBe(
      'NONE',
    );
    expect((await build({ model: 'm', messages: [], tools, tool_choice: 'required' })).body.tool_choice).toBe(
      'REQUIRED',
    );
    const forced = await build({
      model: 'm',
      messages: [],
      tools,
      tool_choice: { type: 'function', function: { name: 'cityAttractions' } },
    });
    expect(forced.body.tools.map((t: LooseJson) => t.function.name)).toEqual(['cityAttractions']);
    expect(forced.body.tool_choice).toBe('REQUIRED');
    const city = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const strict = await build({
      model: 'm',
      messages: [],
      tools: [{ type: 'function', function: { name: 'f', parameters: city, strict: true } }],
    });
    expect(strict.body.strict_tools).toBe(true);
    expect(strict.body.tools[0].function).toEqual({ name: 'f', parameters: city });
  });

  it('asks strict_tools only when every tool offered has a required parameter, which Cohere needs', async () => {
    const city = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const strictTool = { type: 'function', function: { name: 'f', parameters: city, strict: true } };
    // Cohere: "You must specify at least one required parameter. Tools with only optional parameters are not
    // supported in this mode" — and strict_tools holds every tool of the call.
    for (const other of [
      { type: 'function', function: { name: 'now', strict: true } },
      { type: 'function', function: { name: 'now', parameters: {}, strict: true } },
      { type: 'function', function: { name: 'g', parameters: { ...city, required: [] } } },
    ]) {
      const { body } = await build({ model: 'm', messages: [], tools: [strictTool, other] });
      expect(body.strict_tools).toBeUndefined();
    }
    const { body } = await build({
      model: 'm',
      messages: [],
      tools: [strictTool, { type: 'function', function: { name: 'g', parameters: city } }],
    });
    expect(body.strict_tools).toBe(true);
  });

  it('offers only the tools of an allowed_tools choice, its mode as the choice', async () => {
    const required = await build({
      model: 'm',
      messages: [],
      tools,
      tool_choice: {
        type: 'allowed_tools',
        allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'weather' } }] },
      },
    });
    expect(required.body.tools.map((t: LooseJson) => t.function.name)).toEqual(['weather']);
    expect(required.body.tool_choice).toBe('REQUIRED');
    const auto = await build({
      model: 'm',
      messages: [],
      tools,
      tool_choice: {
        type: 'allowed_tools',
        allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'weather' } }] },
      },
    });
    expect(auto.body.tools.map((t: LooseJson) => t.function.name)).toEqual(['weather']);
    expect(auto.body.tool_choice).toBeUndefined();
  });

  it('refuses a forced function that is not offered', () => {
    const error = refusal({
      model: 'm',
      messages: [],
      tools,
      tool_choice: { type: 'function', function: { name: 'x' } },
    });
    expect(error.param).toBe('tool_choice');
    expect(error.status).toBe(400);
  });

  it('maps response_format json_object and json_schema', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const object = await build({ model: 'm', messages: [], response_format: { type: 'json_object' } });
    expect(object.body.response_format).toEqual({ type: 'json_object' });
    const withSchema = await build({
      model: 'm',
      messages: [],
      response_format: { type: 'json_schema', json_schema: { name: 'city', schema, strict: true } },
    });
    expect(withSchema.body.response_format).toEqual({ type: 'json_object', json_schema: schema });
    const text = await build({ model: 'm', messages: [], response_format: { type: 'text' } });
    expect(text.body.response_format).toBeUndefined();
  });

  it('maps thinking and reasoning_effort', async () => {
    const on = await build({ model: 'm', messages: [], thinking: { type: 'enabled', budget_tokens: 2048 } });
    expect(on.body.thinking).toEqual({ type: 'enabled', token_budget: 2048 });
    const off = await build({ model: 'm', messages: [], thinking: { type: 'disabled' } });
    expect(off.body.thinking).toEqual({ type: 'disabled' });
    const effort = await build({ model: 'm', messages: [], reasoning_effort: 'minimal' });
    expect(effort.body.thinking).toEqual({ type: 'disabled' });
  });

  it.each([
    ['logit_bias', { logit_bias: { '42': 10 } }],
    ['logprobs', { logprobs: true }],
    ['top_logprobs', { top_logprobs: 2 }],
    ['functions', { functions: [{ name: 'f' }] }],
    ['audio', { audio: { voice: 'alloy', format: 'mp3' } }],
    ['modalities', { modalities: ['text', 'audio'] }],
  ])('refuses %s with a 400 naming it', (param, extra) => {
    const error = refusal({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...extra });
    expect(error.code).toBe('unsupported_parameter');
    expect(error.param).toBe(param);
  });

  it('leaves refusal parts of an assistant message out', async () => {
    const { body } = await build({
      model: 'm',
      messages: [
        { role: 'user', content: 'x' },
        {
          role: 'assistant',
          content: [
            { type: 'refusal', refusal: 'I cannot help with that.' },
            { type: 'text', text: 'Ask me something else.' },
          ],
        },
        { role: 'user', content: 'hi' },
      ],
    });
    expect(body.messages[1]).toEqual({ role: 'assistant', content: 'Ask me something else.' });
  });

  it('sends thinking content parts beside tool calls back as the tool plan', async () => {
    const { body } = await build({
      model: 'm',
      messages: [
        { role: 'user', content: 'x' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'I will look it up.' },
            { type: 'redacted_thinking', data: 'opaque' },
          ],
          tool_calls: [{ id: 't1', type: 'function', function: { name: 'weather', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 't1', content: 'sunny' },
      ],
    });
    expect(body.messages[1]).toEqual({
      role: 'assistant',
      tool_calls: [{ id: 't1', type: 'function', function: { name: 'weather', arguments: '{}' } }],
      tool_plan: 'I will look it up.',
    });
  });

  it('refuses content parts Cohere cannot take', () => {
    const error = refusal({
      model: 'm',
      messages: [
        { role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }] },
      ],
    });
    expect(error.param).toBe('messages[0].content[0].type');
  });

  it('does not offer text completions', () => {
    expect(() =>
      buildRequest(cohereAdapter, cohereRequest({ model: 'm', prompt: 'x' }, { endpoint: 'completions' })),
    ).toThrowError(expect.objectContaining({ code: 'unsupported_endpoint' }));
  });
});

describe('Cohere embed request', () => {
  it('posts texts with float embedding types and the default input_type', async () => {
    const { upstream, body } = await build(
      { model: 'embed-v4.0', input: ['a', 'b'], dimensions: 256, encoding_format: 'base64', user: 'u' },
      { endpoint: 'embeddings' },
    );
    expect(upstream.url).toBe('https://api.cohere.com/v2/embed');
    expect(body).toEqual({
      model: 'embed-v4.0',
      texts: ['a', 'b'],
      input_type: 'search_document',
      embedding_types: ['float'],
      output_dimension: 256,
    });
  });

  it("passes Cohere's own input_type and refuses token arrays", async () => {
    const { body } = await build(
      { model: 'embed-v4.0', input: 'q', input_type: 'search_query' },
      { endpoint: 'embeddings' },
    );
    expect(body.texts).toEqual(['q']);
    expect(body.input_type).toBe('search_query');
    expect(() =>
      buildRequest(
        cohereAdapter,
        cohereRequest({ model: 'embed-v4.0', input: [1, 2, 3] }, { endpoint: 'embeddings' }),
      ),
    ).toThrowError(expect.objectContaining({ code: 'unsupported_parameter', param: 'input' }));
  });
});

describe('Cohere pass-through', () => {
  it('adds the key and keeps a versioned path', async () => {
    const base = {
      method: 'POST' as const,
      headers: { authorization: 'Bearer client', 'content-type': 'application/json' },
    };
    const target = { provider: 'cohere', api_key: 'co-test-key' };
    const v2 = await cohereAdapter.buildPassthrough({ ...base, path: '/v2/rerank', target });
    expect(v2.url).toBe('https://api.cohere.com/v2/rerank');
    expect(v2.headers.authorization).toBe('Bearer co-test-key');
    const v1 = await cohereAdapter.buildPassthrough({ ...base, path: '/rerank', target });
    expect(v1.url).toBe('https://api.cohere.com/v1/rerank');
  });
});
