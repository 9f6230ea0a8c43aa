/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/core/errors.js';
import { googleAdapter } from '../../../src/providers/google/index.js';
import type { AdapterRequest } from '../../../src/providers/types.js';
import { chatRequest } from './helpers.js';
import { buildRequest } from '../operations.js';
import { THINKING_HISTORY } from '../thinking-history.js';

async function build(body: Record<string, unknown>, overrides: Partial<AdapterRequest> = {}) {
  const upstream = await buildRequest(googleAdapter, chatRequest(body, overrides));
  return { upstream, body: JSON.parse(String(upstream.body)) as Record<string, any> };
}

async function refusal(
  body: Record<string, unknown>,
  overrides: Partial<AdapterRequest> = {},
): Promise<GatewayError> {
  try {
    await buildRequest(googleAdapter, chatRequest(body, overrides));
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }
  throw new Error('expected a refusal');
}

const weatherTool = {
  type: 'function',
  function: {
    name: 'weather',
    description: 'Weather of a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, unit: { type: ['string', 'null'], enum: ['c', 'f', null] } },
      required: ['city'],
      additionalProperties: false,
    },
  },
};

describe('google request: address and auth', () => {
  it('posts generateContent with the key in x-goog-api-key', async () => {
    const { upstream } = await build({});
    expect(upstream.method).toBe('POST');
    expect(upstream.url).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent',
    );
    expect(upstream.headers['x-goog-api-key']).toBe('test-key');
    expect(upstream.headers.authorization).toBeUndefined();
  });

  it('streams with streamGenerateContent?alt=sse under custom_host, keeping the provider path', async () => {
    const { upstream } = await build(
      { stream: true, model: 'models/gemini-2.5-pro' },
      { target: { provider: 'google', api_key: 'k', custom_host: 'http://127.0.0.1:9999/base' } },
    );
    expect(upstream.url).toBe(
      'http://127.0.0.1:9999/base/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse',
    );
  });

  it('refuses a target without api_key', async () => {
    const error = await refusal({}, { target: { provider: 'google' } });
    expect(error.code).toBe('provider_config_error');
    expect(error.param).toBe('api_key');
  });
});

describe('google request: messages', () => {
  it('puts system and developer messages in systemInstruction and keeps multi-turn history', async () => {
    const { body } = await build({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Use metric units.' }] },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello!' },
        { role: 'user', content: 'Weather?' },
      ],
    });
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }, { text: 'Use metric units.' }] });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Hi' }] },
      { role: 'model', parts: [{ text: 'Hello!' }] },
      { role: 'user', parts: [{ text: 'Weather?' }] },
    ]);
  });

  it('gives a request of nothing but a system prompt a minimal user turn, as Gemini needs contents', async () => {
    const { body } = await build({ messages: [{ role: 'system', content: 'Say hi in French.' }] });
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'Say hi in French.' }] });
    expect(body.contents).toEqual([{ role: 'user', parts: [{ text: 'Please continue.' }] }]);
  });

  it('sends data URL images inline and https / gs:// images as fileData', async () => {
    const { body } = await build({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.webp?x=1' } },
            { type: 'image_url', image_url: { url: 'gs://bucket/dog.jpg' } },
          ],
        },
      ],
    });
    expect(body.contents[0].parts).toEqual([
      { text: 'Compare' },
      { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
      { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/cat.webp?x=1' } },
      { fileData: { mimeType: 'image/jpeg', fileUri: 'gs://bucket/dog.jpg' } },
    ]);
  });

  it('refuses an image URL it cannot pass on, naming the part', async () => {
    const error = await refusal({
      messages: [
        { role: 'user', content: 'a' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'x' },
            { type: 'image_url', image_url: { url: 'ftp://host/a.png' } },
          ],
        },
      ],
    });
    expect(error.status).toBe(400);
    expect(error.param).toBe('messages[1].content[1].image_url');
  });

  it('turns tool calls into functionCall parts and tool results into one merged functionResponse turn', async () => {
    const { body } = await build({
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_b', type: 'function', function: { name: 'time', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_b', content: '{"time":"10:00"}' },
        { role: 'tool', tool_call_id: 'call_a', content: 'sunny' },
      ],
    });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Paris and Rome?' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'weather', args: { city: 'Paris' } } },
          { functionCall: { name: 'time', args: { city: 'Rome' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'time', response: { time: '10:00' } } },
          { functionResponse: { name: 'weather', response: { content: 'sunny' } } },
        ],
      },
    ]);
  });

  it('sends the text parts of a tool result one line each, not run together', async () => {
    const { body } = await build({
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{}' } }],
        },
        {
          role: 'tool',
          tool_call_id: 'call_a',
          content: [
            { type: 'text', text: '21C' },
            { type: 'text', text: 'sunny' },
          ],
        },
      ],
    });
    expect(body.contents[2].parts).toEqual([
      { functionResponse: { name: 'weather', response: { content: '21C\nsunny' } } },
    ]);
  });

  it('refuses a tool message whose id matches no earlier tool call', async () => {
    const error = await refusal({ messages: [{ role: 'tool', tool_call_id: 'nope', content: 'x' }] });
    expect(error.param).toBe('messages[0].tool_call_id');
  });

  it('leaves refusal parts of an assistant message out', async () => {
    const { body } = await build({
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot help with that.' }] },
        { role: 'user', content: 'hi' },
      ],
    });
    expect(body.contents).toEqual([{ role: 'user', parts: [{ text: 'x' }, { text: 'hi' }] }]);
  });

  it('sends the signature of a thinking content part back with the function call, not its text', async () => {
    const { body } = await build({
      messages: THINKING_HISTORY,
    });
    expect(body.contents[1]).toEqual({
      role: 'model',
      parts: [
        { text: 'Checking.' },
        { functionCall: { name: 'get_weather', args: {} }, thoughtSignature: 'sig-abc' },
      ],
    });
  });

  it('sends back a thought signature from content_blocks, else the placeholder for Gemini 3', async () => {
    const history = (extra: Record<string, unknown>) => [
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{}' } }],
        ...extra,
      },
      { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
    ];
    const signed = await build({
      model: 'gemini-3-pro-preview',
      messages: history({ content_blocks: [{ type: 'thinking', thinking: '', signature: 'SIG' }] }),
    });
    expect(signed.body.contents[1].parts[0].thoughtSignature).toBe('SIG');
    const unsigned = await build({ model: 'gemini-3-pro-preview', messages: history({}) });
    expect(unsigned.body.contents[1].parts[0].thoughtSignature).toBe('skip_thought_signature_validator');
    const older = await build({ model: 'gemini-2.5-flash', messages: history({}) });
    expect(older.body.contents[1].parts[0].thoughtSignature).toBeUndefined();
  });
});

describe('google request: tools and tool_choice', () => {
  it('declares functions with their schema converted to Gemini’s subset', async () => {
    const { body } = await build({ tools: [weatherTool] });
    expect(body.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'weather',
            description: 'Weather of a city',
            parameters: {
              type: 'OBJECT',
              properties: {
                city: { type: 'STRING' },
                unit: { type: 'STRING', nullable: true, enum: ['c', 'f'] },
              },
              required: ['city'],
            },
          },
        ],
      },
    ]);
    expect(body.toolConfig).toBeUndefined();
  });

  it.each([
    ['none', { mode: 'NONE' }],
    ['auto', { mode: 'AUTO' }],
    ['required', { mode: 'ANY' }],
    [
      { type: 'function', function: { name: 'weather' } },
      { mode: 'ANY', allowedFunctionNames: ['weather'] },
    ],
  ])('tool_choice %j → functionCallingConfig %j', async (choice, config) => {
    const { body } = await build({ tools: [weatherTool], tool_choice: choice });
    expect(body.toolConfig).toEqual({ functionCallingConfig: config });
  });

  it('declares only the functions of an allowed_tools choice, its mode as the choice', async () => {
    const timeTool = { type: 'function', function: { name: 'time', parameters: { type: 'object' } } };
    const { body } = await build({
      tools: [weatherTool, timeTool],
      tool_choice: {
        type: 'allowed_tools',
        allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'time' } }] },
      },
    });
    expect(body.tools[0].functionDeclarations.map((d: { name: string }) => d.name)).toEqual(['time']);
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
  });

  it('refuses a forced function that is not declared', async () => {
    const error = await refusal({
      tools: [weatherTool],
      tool_choice: { type: 'function', function: { name: 'x' } },
    });
    expect(error.param).toBe('tool_choice');
  });
});

describe('google request: generation settings', () => {
  it('maps sampling, limits, stop, n and seed; drops user and parallel_tool_calls', async () => {
    const { body } = await build({
      temperature: 0.3,
      top_p: 0.9,
      seed: 7,
      n: 2,
      stop: 'END',
      max_tokens: 50,
      max_completion_tokens: 80,
      presence_penalty: 0.5,
      frequency_penalty: 0.25,
      user: 'u-1',
      parallel_tool_calls: false,
    });
    expect(body.generationConfig).toEqual({
      temperature: 0.3,
      topP: 0.9,
      seed: 7,
      candidateCount: 2,
      stopSequences: ['END'],
      maxOutputTokens: 80,
      presencePenalty: 0.5,
      frequencyPenalty: 0.25,
    });
    expect(JSON.stringify(body)).not.toContain('u-1');
  });

  it('maps max_tokens when it is the only limit', async () => {
    const { body } = await build({ max_tokens: 50, stop: ['a', 'b'] });
    expect(body.generationConfig).toEqual({ maxOutputTokens: 50, stopSequences: ['a', 'b'] });
  });

  it('maps json_object and json_schema to responseMimeType and a converted responseSchema', async () => {
    const json = await build({ response_format: { type: 'json_object' } });
    expect(json.body.generationConfig).toEqual({ responseMimeType: 'application/json' });
    const schema = await build({
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'person',
          strict: true,
          schema: {
            $schema: 'https://json-schema.org/draft/2020-12/schema',
            type: 'object',
            properties: {
              name: { type: 'string', minLength: 1 },
              age: { type: 'integer', minimum: 0 },
              pet: { $ref: '#/$defs/pet' },
              tags: { type: 'array', items: { type: 'string' }, maxItems: 3 },
              kind: { const: 'human' },
              born: { type: 'string', format: 'date-time' },
              email: { type: 'string', format: 'email' },
            },
            required: ['name', 'age'],
            additionalProperties: false,
            $defs: {
              pet: {
                type: 'object',
                properties: { species: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
              },
            },
          },
        },
      },
    });
    expect(schema.body.generationConfig.responseMimeType).toBe('application/json');
    expect(schema.body.generationConfig.responseSchema).toEqual({
      type: 'OBJECT',
      properties: {
        name: { type: 'STRING', minLength: '1' },
        age: { type: 'INTEGER', minimum: 0 },
        pet: { type: 'OBJECT', properties: { species: { type: 'STRING', nullable: true } } },
        tags: { type: 'ARRAY', items: { type: 'STRING' }, maxItems: '3' },
        kind: { type: 'STRING', enum: ['human'] },
        born: { type: 'STRING', format: 'date-time' },
        email: { type: 'STRING' },
      },
      required: ['name', 'age'],
    });
  });

  it('maps the thinking option to thinkingConfig, asking for thoughts only when not strict', async () => {
    const loose = await build({ thinking: { type: 'enabled', budget_tokens: 1024 } });
    expect(loose.body.generationConfig).toEqual({
      thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
    });
    const strict = await build(
      { thinking: { type: 'enabled', budget_tokens: 1024 } },
      { strictCompat: true },
    );
    expect(strict.body.generationConfig).toEqual({
      thinkingConfig: { thinkingBudget: 1024, includeThoughts: false },
    });
    const off = await build({ thinking: { type: 'disabled' } });
    expect(off.body.generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 0 } });
  });

  it.each([
    ['gemini-2.5-flash', 'high', { thinkingBudget: 24576, includeThoughts: true }],
    ['gemini-2.5-flash', 'low', { thinkingBudget: 1024, includeThoughts: true }],
    ['gemini-2.5-flash', 'none', { thinkingBudget: 0 }],
    ['gemini-3-flash-preview', 'medium', { thinkingLevel: 'medium', includeThoughts: true }],
    ['gemini-3-flash-preview', 'minimal', { thinkingLevel: 'minimal', includeThoughts: true }],
    ['gemini-3.1-pro-preview', 'minimal', { thinkingLevel: 'low', includeThoughts: true }],
    ['gemini-3.1-pro-preview', 'xhigh', { thinkingLevel: 'high', includeThoughts: true }],
    ['gemini-3.1-pro-preview', 'max', { thinkingLevel: 'high', includeThoughts: true }],
    ['gemini-2.5-flash', 'max', { thinkingBudget: 24576, includeThoughts: true }],
  ])('maps reasoning_effort on %s: %s → %j', async (model, effort, thinkingConfig) => {
    const { body } = await build({ model, reasoning_effort: effort });
    expect(body.generationConfig).toEqual({ thinkingConfig });
  });

  it('lets the thinking option win over reasoning_effort, and refuses an unknown effort', async () => {
    const both = await build({
      reasoning_effort: 'high',
      thinking: { type: 'enabled', budget_tokens: 2048 },
    });
    expect(both.body.generationConfig.thinkingConfig).toEqual({
      thinkingBudget: 2048,
      includeThoughts: true,
    });
    expect((await refusal({ reasoning_effort: 'extreme' })).param).toBe('reasoning_effort');
  });

  it.each([
    [{ logit_bias: { '50256': -100 } }, 'logit_bias'],
    [{ logprobs: true }, 'logprobs'],
    [{ top_logprobs: 3 }, 'top_logprobs'],
    [{ response_format: { type: 'xml' } }, 'response_format'],
    [{ tools: [{ type: 'web_search' }] }, 'tools[0].type'],
  ])('refuses %j naming %s', async (body, param) => {
    const error = await refusal(body);
    expect(error.code).toBe('unsupported_parameter');
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
  });
});

describe('google request: embeddings', () => {
  it('posts batchEmbedContents with one request per input and outputDimensionality', async () => {
    const upstream = await buildRequest(googleAdapter, {
      ...chatRequest({}),
      endpoint: 'embeddings',
      body: { model: 'gemini-embedding-001', input: ['a', 'b'], dimensions: 256 },
    });
    expect(upstream.url).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:batchEmbedContents',
    );
    expect(JSON.parse(String(upstream.body))).toEqual({
      requests: [
        {
          model: 'models/gemini-embedding-001',
          content: { parts: [{ text: 'a' }] },
          outputDimensionality: 256,
        },
        {
          model: 'models/gemini-embedding-001',
          content: { parts: [{ text: 'b' }] },
          outputDimensionality: 256,
        },
      ],
    });
  });

  it('refuses token-array input', async () => {
    await expect(
      Promise.resolve().then(() =>
        buildRequest(googleAdapter, {
          ...chatRequest({}),
          endpoint: 'embeddings',
          body: { model: 'm', input: [[1, 2]] },
        }),
      ),
    ).rejects.toMatchObject({ param: 'input', status: 400 });
  });
});
