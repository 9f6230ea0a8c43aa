import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/core/errors.js';
import { bedrockAdapter } from '../../../src/providers/bedrock/index.js';
import type { AdapterRequest, UpstreamRequest } from '../../../src/providers/types.js';
import { startFakeBedrock, type FakeBedrock } from '../../fakes/bedrock/server.js';
import { bedrockRequest, CREDENTIALS, MODEL } from './helpers.js';
import { buildRequest } from '../operations.js';
import { THINKING_HISTORY } from '../thinking-history.js';

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions dig into the wire body freely
type WireBody = Record<string, any>;

async function build(body: Record<string, unknown>, overrides: Partial<AdapterRequest> = {}) {
  const req = await buildRequest(bedrockAdapter, bedrockRequest(body, overrides));
  return { req, body: JSON.parse(String(req.body)) as WireBody };
}

async function refusal(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
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
    description: 'Weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
  },
};

describe('bedrock request translation', () => {
  it('posts to the regional Converse URL with the model id encoded, signed with SigV4', async () => {
    const { req } = await build({});
    expect(req.url).toBe(
      `https://bedrock-runtime.us-east-1.amazonaws.com/model/${encodeURIComponent(MODEL)}/converse`,
    );
    expect(req.url).toContain('%3A0/converse');
    expect(req.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDFAKEBEDROCK\/\d{8}\/us-east-1\/bedrock\/aws4_request, SignedHeaders=.*host.*x-amz-date/,
    );
    expect(req.headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
    expect(req.headers.host).toBeUndefined();
    const stream = await build({ stream: true });
    expect(stream.req.url).toMatch(/\/converse-stream$/);
  });

  it('sends the session token when set', async () => {
    const { req } = await build({}, { target: { ...CREDENTIALS, cloudc_session_token: 'session-1' } });
    expect(req.headers['x-amz-security-token']).toBe('session-1');
    expect(req.headers.authorization).toContain('x-amz-security-token');
  });

  it.each([
    [{ cloudc_region: undefined }, 'cloudc_region'],
    [{ cloudc_region: 'moon-base-1' }, 'cloudc_region'],
    [{ cloudc_region: 'us-east-1; rm -rf' }, 'cloudc_region'],
    [{ cloudc_access_key_id: undefined }, 'cloudc_access_key_id'],
    [{ cloudc_secret_access_key: '' }, 'cloudc_secret_access_key'],
  ])('refuses a target %j naming %s', async (change, param) => {
    const error = await refusal(Promise.resolve(build({}, { target: { ...CREDENTIALS, ...change } })));
    expect(error.code).toBe('provider_config_error');
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
  });

  it('translates system, sampling, stop and max tokens into Converse fields', async () => {
    const { body } = await build({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: 'Use metric units.' },
        { role: 'user', content: [{ type: 'text', text: 'Hello', cache_control: { type: 'ephemeral' } }] },
      ],
      temperature: 0.3,
      top_p: 0.8,
      stop: ['END'],
      max_tokens: 50,
      max_completion_tokens: 60,
      seed: 1,
      user: 'u',
    });
    expect(body.system).toEqual([{ text: 'Be brief.' }, { text: 'Use metric units.' }]);
    expect(body.messages).toEqual([
      { role: 'user', content: [{ text: 'Hello' }, { cachePoint: { type: 'default' } }] },
    ]);
    expect(body.inferenceConfig).toEqual({
      maxTokens: 60,
      temperature: 0.3,
      topP: 0.8,
      stopSequences: ['END'],
    });
    expect(body.seed).toBeUndefined();
    expect(body.user).toBeUndefined();
  });

  // cache_control as LiteLLM and Portkey take it on the chat API: on a content part, on a whole message, on
  // a tool. Each marks a cache checkpoint after what it is on, with its ttl, for the models that cache.
  const CACHE = { type: 'ephemeral' };
  const HOUR = { type: 'ephemeral', ttl: '1h' };
  // 4 breakpoints, those kept an hour first, as Bedrock (like Anthropic) demands.
  const cachedConversation = {
    messages: [
      { role: 'system', content: 'Long rules.', cache_control: HOUR },
      { role: 'user', content: 'Weather?', cache_control: HOUR },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny', cache_control: CACHE },
      { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
    ],
    tools: [{ ...weatherTool, cache_control: HOUR }],
  };

  it('marks cache_control on a message, a tool result and a tool with a cachePoint after it (Claude)', async () => {
    const { body } = await build(cachedConversation);
    const point = { cachePoint: { type: 'default' } };
    const hour = { cachePoint: { type: 'default', ttl: '1h' } };
    expect(body.system).toEqual([{ text: 'Long rules.' }, hour]);
    expect(body.messages).toEqual([
      { role: 'user', content: [{ text: 'Weather?' }, hour] },
      {
        role: 'assistant',
        content: [{ toolUse: { toolUseId: 'call_1', name: 'get_weather', input: { city: 'Paris' } } }],
      },
      {
        role: 'user',
        content: [
          { toolResult: { toolUseId: 'call_1', content: [{ text: 'sunny' }] } },
          point,
          { text: 'Thanks' },
        ],
      },
    ]);
    expect(body.toolConfig.tools).toEqual([
      { toolSpec: expect.objectContaining({ name: 'get_weather' }) },
      hour,
    ]);
  });

  it('gives Nova cache points in system and messages only, and a model without prompt caching none', async () => {
    const nova = (await build({ ...cachedConversation, model: 'us.amazon.nova-pro-v1:0' })).body;
    expect(nova.system).toEqual([{ text: 'Long rules.' }, { cachePoint: { type: 'default', ttl: '1h' } }]);
    expect(nova.messages[0].content.at(-1)).toEqual({ cachePoint: { type: 'default', ttl: '1h' } });
    expect(nova.toolConfig.tools).toEqual([{ toolSpec: expect.objectContaining({ name: 'get_weather' }) }]);

    for (const model of ['meta.llama3-70b-instruct-v1:0', 'anthropic.claude-3-haiku-20240307-v1:0']) {
      const { body } = await build({ ...cachedConversation, model });
      expect(JSON.stringify(body)).not.toContain('cachePoint');
    }
  });

  // A message's mark is a point after its last block: where that block's own mark already put one, it is
  // the same point (as on Anthropic, where the block keeps its own), not a second one next to it.
  it('adds no second cache point for a message whose last part is marked already', async () => {
    const { body } = await build({
      messages: [
        {
          role: 'user',
          content: [{ type: 'text', text: 'Long document.', cache_control: HOUR }],
          cache_control: CACHE,
        },
      ],
    });
    expect(body.messages[0].content).toEqual([
      { text: 'Long document.' },
      { cachePoint: { type: 'default', ttl: '1h' } },
    ]);
  });

  // Converse refuses a cache point right after a reasoning block ("Cache point cannot be inserted after
  // reasoning block"), and one first in a message marks nothing ("There is nothing available to cache"): a
  // message holding only reasoning has no place for one, so its mark is dropped.
  it('puts no cache point after a reasoning block: a mark on an assistant message of reasoning alone is dropped', async () => {
    const thinking = { type: 'thinking', thinking: 'Let me think.', signature: 'sig' };
    const { body } = await build({
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [
        { role: 'user', content: 'Why?' },
        { role: 'assistant', content: null, content_blocks: [thinking], cache_control: CACHE },
        { role: 'user', content: 'Go on.' },
        { role: 'assistant', content: 'Because.', content_blocks: [thinking], cache_control: CACHE },
        { role: 'user', content: 'Thanks.' },
      ],
    });
    const reasoning = { reasoningContent: { reasoningText: { text: 'Let me think.', signature: 'sig' } } };
    expect(body.messages[1].content).toEqual([reasoning]);
    // Text after the reasoning takes the point, as before.
    expect(body.messages[3].content).toEqual([
      reasoning,
      { text: 'Because.' },
      { cachePoint: { type: 'default' } },
    ]);
    for (const message of body.messages) {
      message.content.forEach((block: WireBody, k: number) => {
        if ('cachePoint' in block) expect(message.content[k - 1]).not.toHaveProperty('reasoningContent');
      });
    }
  });

  // Converse takes at most 4 cache points and reads them toolConfig, system, messages, none kept longer than
  // one before it: a request that breaks that is refused naming the chat field, for the points the model
  // is sent (Nova's tools get none, and do not count).
  it('refuses a fifth cache point, or one kept an hour after a five-minute one, naming the chat field', async () => {
    const fifth = {
      ...cachedConversation,
      messages: [
        ...cachedConversation.messages.slice(0, -1),
        { role: 'user', content: [{ type: 'text', text: 'Thanks', cache_control: CACHE }] },
      ],
    };
    const error = await refusal(build(fifth));
    expect(error.status).toBe(400);
    expect(error.param).toBe('messages[4].content[0].cache_control');
    expect(error.message).toContain('a maximum of 4 blocks with cache_control');
    const nova = (await build({ ...fifth, model: 'us.amazon.nova-pro-v1:0' })).body;
    expect(JSON.stringify(nova).match(/cachePoint/g)).toHaveLength(4);

    const late = await refusal(
      build({ ...cachedConversation, tools: [{ ...weatherTool, cache_control: CACHE }] }),
    );
    expect(late.param).toBe('messages[0].cache_control.ttl');
    expect(late.message).toContain("a ttl='1h' cache_control block must not come after a ttl='5m'");
    // The tool's point is not sent to Nova: its order is not Nova's to judge.
    await build({
      ...cachedConversation,
      tools: [{ ...weatherTool, cache_control: CACHE }],
      model: 'us.amazon.nova-pro-v1:0',
    });
  });

  it.each(['frequency_penalty', 'presence_penalty', 'logit_bias', 'logprobs', 'top_logprobs'])(
    'refuses %s naming it',
    async (name) => {
      const value = name === 'logit_bias' ? { 1: 1 } : name === 'logprobs' ? true : 1;
      const error = await refusal(build({ [name]: value }));
      expect(error.code).toBe('unsupported_parameter');
      expect(error.param).toBe(name);
    },
  );

  it('takes data URL images as bytes and refuses image URLs naming the part', async () => {
    const { body } = await build({
      messages: [
        {
          role: 'user',
          content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }],
        },
      ],
    });
    expect(body.messages[0].content).toEqual([{ image: { format: 'png', source: { bytes: PNG } } }]);
    const error = await refusal(
      build({
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: 'y' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'see' },
              { type: 'image_url', image_url: { url: 'https://x/y.png' } },
            ],
          },
        ],
      }),
    );
    expect(error.status).toBe(400);
    expect(error.param).toBe('messages[2].content[1].image_url');
  });

  const documentOf = async (filename: string) =>
    (
      await build({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'file', file: { filename, file_data: 'data:application/pdf;base64,JVBERi0=' } },
            ],
          },
        ],
      })
    ).body.messages[0].content[0].document;

  it.each([
    ['Q3__report.pdf', 'Q3 report'],
    ['invoice_2024.v2.final.pdf', 'invoice 2024 v2 final'],
    ['my  notes (draft) [v1].PDF', 'my notes (draft) [v1]'],
    ['__.pdf', 'document'],
  ])('names the PDF %s %j, as Converse allows', async (filename, name) => {
    expect(await documentOf(filename)).toEqual({ format: 'pdf', name, source: { bytes: 'JVBERi0=' } });
  });

  it('cuts a PDF name to the 200 characters Converse allows', async () => {
    expect((await documentOf(`${'x'.repeat(250)}.pdf`)).name).toBe('x'.repeat(200));
  });

  it('translates tools and tool_choice', async () => {
    const expectations: Array<[unknown, unknown]> = [
      ['auto', undefined],
      ['required', { any: {} }],
      [{ type: 'function', function: { name: 'get_weather' } }, { tool: { name: 'get_weather' } }],
    ];
    for (const [choice, expected] of expectations) {
      const { body } = await build({ tools: [weatherTool], tool_choice: choice });
      expect(body.toolConfig).toEqual({
        tools: [
          {
            toolSpec: {
              name: 'get_weather',
              description: 'Weather',
              inputSchema: { json: weatherTool.function.parameters },
            },
          },
        ],
        ...(expected ? { toolChoice: expected } : {}),
      });
    }
    expect((await build({ tools: [weatherTool], tool_choice: 'none' })).body.toolConfig).toBeUndefined();
  });

  it('keeps strict on a tool', async () => {
    const { body } = await build({
      tools: [{ ...weatherTool, function: { ...weatherTool.function, strict: true } }],
    });
    expect(body.toolConfig.tools[0].toolSpec.strict).toBe(true);
    expect((await build({ tools: [weatherTool] })).body.toolConfig.tools[0].toolSpec.strict).toBeUndefined();
  });

  it('offers only the tools of an allowed_tools choice, its mode as the choice', async () => {
    const timeTool = { type: 'function', function: { name: 'get_time', parameters: { type: 'object' } } };
    for (const [mode, expected] of [
      ['required', { any: {} }],
      ['auto', undefined],
    ] as const) {
      const { body } = await build({
        tools: [weatherTool, timeTool],
        tool_choice: {
          type: 'allowed_tools',
          allowed_tools: { mode, tools: [{ type: 'function', function: { name: 'get_time' } }] },
        },
      });
      expect(body.toolConfig.tools.map((tool: WireBody) => tool.toolSpec.name)).toEqual(['get_time']);
      expect(body.toolConfig.toolChoice).toEqual(expected);
    }
  });

  it('gives a tool history without tools a placeholder tool, since Converse requires a toolConfig with it', async () => {
    const history = [
      { role: 'user', content: 'Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 't1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 't1', content: 'Sunny' },
    ];
    const { body } = await build({ messages: history });
    expect(body.toolConfig.tools.map((tool: WireBody) => tool.toolSpec.name)).toEqual(['no_tools_available']);
    expect(body.toolConfig.toolChoice).toBeUndefined();
    expect((await build({})).body.toolConfig).toBeUndefined();
  });

  it('sends tool history back, merging tool results into one user turn', async () => {
    const { body } = await build({
      tools: [weatherTool],
      tool_choice: 'none',
      messages: [
        { role: 'user', content: 'Paris and Rome?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 't1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 't2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 't1', content: 'Sunny' },
        { role: 'tool', tool_call_id: 't2', content: 'Rainy' },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: [{ text: 'Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { toolUse: { toolUseId: 't1', name: 'get_weather', input: { city: 'Paris' } } },
          { toolUse: { toolUseId: 't2', name: 'get_weather', input: { city: 'Rome' } } },
        ],
      },
      {
        role: 'user',
        content: [
          { toolResult: { toolUseId: 't1', content: [{ text: 'Sunny' }] } },
          { toolResult: { toolUseId: 't2', content: [{ text: 'Rainy' }] } },
        ],
      },
    ]);
    // the history holds tool calls, so the definitions stay (without a choice)
    expect(body.toolConfig.toolChoice).toBeUndefined();
    expect(body.toolConfig.tools).toHaveLength(1);
  });

  it('opens a conversation that starts with the assistant (or has no turn) with a minimal user turn', async () => {
    const { body } = await build({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'assistant', content: 'Hello! How can I help?' },
        { role: 'user', content: 'What is 7 + 5?' },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: [{ text: 'Please continue.' }] },
      { role: 'assistant', content: [{ text: 'Hello! How can I help?' }] },
      { role: 'user', content: [{ text: 'What is 7 + 5?' }] },
    ]);
    const systemOnly = await build({ messages: [{ role: 'system', content: 'Say hi.' }] });
    expect(systemOnly.body.messages).toEqual([{ role: 'user', content: [{ text: 'Please continue.' }] }]);
    // a conversation that already starts with the user is unchanged
    expect((await build({})).body.messages).toEqual([{ role: 'user', content: [{ text: 'Hi' }] }]);
  });

  it('maps json_schema to outputConfig.textFormat and json_object to a forced tool', async () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] };
    const { body } = await build({
      response_format: { type: 'json_schema', json_schema: { name: 'thing', schema } },
    });
    expect(body.outputConfig).toEqual({
      textFormat: {
        type: 'json_schema',
        structure: { jsonSchema: { schema: JSON.stringify(schema), name: 'thing' } },
      },
    });
    const json = await build({ response_format: { type: 'json_object' } });
    expect(json.body.toolConfig.toolChoice).toEqual({ tool: { name: 'json' } });
  });

  it('forces the json tool of json_object only as each model takes a tool choice', async () => {
    const json = { response_format: { type: 'json_object' } };
    // Claude and Nova take a named tool; so may an ARN that names no model (Bedrock judges)
    for (const model of [
      'us.anthropic.claude-sonnet-4-20250514-v1:0',
      'amazon.nova-pro-v1:0',
      'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123',
    ]) {
      expect((await build({ ...json, model })).body.toolConfig.toolChoice).toEqual({
        tool: { name: 'json' },
      });
    }
    // an ARN whose cloudc_base_model names a model without toolChoice is refused as that model is
    const profile = 'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123';
    const llamaProfile = await refusal(
      build(
        { ...json, model: profile },
        { target: { ...CREDENTIALS, cloudc_base_model: 'meta.llama3-3-70b-instruct-v1:0' } },
      ),
    );
    expect(llamaProfile.param).toBe('response_format');
    // Mistral Large takes only any, which with the json tool alone offered forces it all the same
    const mistral = await build({ ...json, model: 'mistral.mistral-large-2407-v1:0' });
    expect(mistral.body.toolConfig).toEqual({
      tools: [expect.objectContaining({ toolSpec: expect.objectContaining({ name: 'json' }) })],
      toolChoice: { any: {} },
    });
    // the others take no toolChoice at all: a 400 naming response_format, not Bedrock's refusal
    for (const model of [
      'meta.llama3-3-70b-instruct-v1:0',
      'us.meta.llama4-maverick-17b-instruct-v1:0',
      'cohere.command-r-plus-v1:0',
    ]) {
      const error = await refusal(build({ ...json, model }));
      expect(error.status).toBe(400);
      expect(error.param).toBe('response_format');
      expect(error.message).toContain('json_schema');
    }
  });

  it('sends thinking content parts back as reasoningContent before the toolUse', async () => {
    const { body } = await build({
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tools: [weatherTool],
      messages: THINKING_HISTORY,
    });
    expect(body.messages[1].content).toEqual([
      { reasoningContent: { reasoningText: { text: 'I should call the tool.', signature: 'sig-abc' } } },
      { reasoningContent: { redactedContent: 'opaque' } },
      { text: 'Checking.' },
      { toolUse: { toolUseId: 'toolu_1', name: 'get_weather', input: {} } },
    ]);
  });

  it('maps thinking for Claude models, sends signed reasoning back, refuses it for others', async () => {
    const { body } = await build({
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: 'a',
          content_blocks: [{ type: 'thinking', thinking: 'hmm', signature: 'sig' }],
        },
        { role: 'user', content: 'q2' },
      ],
    });
    expect(body.additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 1024 } });
    expect(body.inferenceConfig.maxTokens).toBe(1024 + 4096);
    expect(body.messages[1].content).toEqual([
      { reasoningContent: { reasoningText: { text: 'hmm', signature: 'sig' } } },
      { text: 'a' },
    ]);
    const error = await refusal(
      build({ model: 'amazon.nova-pro-v1:0', thinking: { type: 'enabled', budget_tokens: 1024 } }),
    );
    expect(error.param).toBe('thinking');
  });

  it('builds Titan and Cohere embedding calls and refuses what they cannot take', async () => {
    const titan = await buildRequest(bedrockAdapter, {
      ...bedrockRequest({}),
      endpoint: 'embeddings',
      body: { model: 'amazon.titan-embed-text-v2:0', input: 'hello', dimensions: 256 },
    });
    expect(titan.url).toMatch(/\/model\/amazon\.titan-embed-text-v2%3A0\/invoke$/);
    expect(JSON.parse(String(titan.body))).toEqual({ inputText: 'hello', dimensions: 256 });
    const cohere = await buildRequest(bedrockAdapter, {
      ...bedrockRequest({}),
      endpoint: 'embeddings',
      body: { model: 'cohere.embed-english-v3', input: ['a', 'b'] },
    });
    expect(JSON.parse(String(cohere.body))).toEqual({ texts: ['a', 'b'], input_type: 'search_document' });
    const many = await refusal(
      Promise.resolve(
        buildRequest(bedrockAdapter, {
          ...bedrockRequest({}),
          endpoint: 'embeddings',
          body: { model: 'amazon.titan-embed-text-v2:0', input: ['a', 'b'] },
        }),
      ),
    );
    expect(many.param).toBe('input');
  });
});

describe('bedrock Cohere Embed v4', () => {
  it('takes dimensions as output_dimension; Embed v3, which has none, refuses it', async () => {
    const v4 = await buildRequest(bedrockAdapter, {
      ...bedrockRequest({}),
      endpoint: 'embeddings',
      body: { model: 'cohere.embed-v4:0', input: ['a'], dimensions: 512 },
    });
    expect(JSON.parse(String(v4.body))).toEqual({
      texts: ['a'],
      input_type: 'search_document',
      output_dimension: 512,
    });
    const v3 = await refusal(
      Promise.resolve().then(() =>
        buildRequest(bedrockAdapter, {
          ...bedrockRequest({}),
          endpoint: 'embeddings',
          body: { model: 'cohere.embed-english-v3', input: ['a'], dimensions: 512 },
        }),
      ),
    );
    expect(v3.param).toBe('dimensions');
  });
});

describe('bedrock embeddings through an ARN that names no model', () => {
  const PROFILE = 'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/emb42';
  const embeddings = (input: string | string[], target: Record<string, unknown> = {}) =>
    buildRequest(bedrockAdapter, {
      ...bedrockRequest({}),
      endpoint: 'embeddings',
      body: { model: PROFILE, input },
      target: { ...CREDENTIALS, ...target },
    });

  it("takes the body format of the model cloudc_base_model names, and reads the answer in that model's shape", async () => {
    const cohere = await embeddings(['a', 'b'], { cloudc_base_model: 'cohere.embed-english-v3' });
    expect(cohere.url).toMatch(/\/model\/arn%3Aaws%3Abedrock%3A.*emb42\/invoke$/);
    expect(JSON.parse(String(cohere.body))).toEqual({ texts: ['a', 'b'], input_type: 'search_document' });
    const titan = await embeddings('hello', { cloudc_base_model: 'amazon.titan-embed-text-v2:0' });
    expect(JSON.parse(String(titan.body))).toEqual({ inputText: 'hello' });

    const parse = bedrockAdapter.operations.embeddings!.parseResponse!;
    const req = {
      ...bedrockRequest({}),
      endpoint: 'embeddings',
      body: { model: PROFILE, input: ['a'] },
      target: { ...CREDENTIALS, cloudc_base_model: 'cohere.embed-english-v3' },
    } as unknown as AdapterRequest<'embeddings'>;
    const answer = await parse(req, {
      status: 200,
      headers: { 'x-amzn-bedrock-input-token-count': '3' },
      body: { embeddings: [[0.5, 0.25]] },
    } as never);
    expect(answer).toMatchObject({
      data: [{ index: 0, embedding: [0.5, 0.25] }],
      model: PROFILE,
      usage: { prompt_tokens: 3 },
    });
  });

  it('without cloudc_base_model, is a 400 naming that key rather than a guess', async () => {
    const error = await refusal(Promise.resolve().then(() => embeddings('hello')));
    expect(error.status).toBe(400);
    expect(error.param).toBe('cloudc_base_model');
  });
});

describe('bedrock signing against the fake (verified by aws4)', () => {
  let fake: FakeBedrock;
  beforeAll(async () => {
    fake = await startFakeBedrock({ sessionToken: 'session-1' });
  });
  afterAll(() => fake.close());

  async function send(req: UpstreamRequest) {
    const res = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body as string });
    return {
      status: res.status,
      errorType: res.headers.get('x-amzn-errortype'),
      body: (await res.json()) as WireBody,
    };
  }

  it('accepts a request signed over the custom_host URL and body', async () => {
    const target = { ...CREDENTIALS, cloudc_session_token: 'session-1', custom_host: fake.url };
    const { req } = await build(
      { messages: [{ role: 'user', content: 'Count the r in strawberry' }] },
      { target },
    );
    const res = await send(req);
    expect(res.status).toBe(200);
    expect(fake.requests.at(-1)?.modelId).toBe(MODEL);
    expect(fake.requests.at(-1)?.body.messages).toEqual([
      { role: 'user', content: [{ text: 'Count the r in strawberry' }] },
    ]);
  });

  it('is refused with 403 InvalidSignatureException for a wrong secret', async () => {
    const target = {
      ...CREDENTIALS,
      cloudc_session_token: 'session-1',
      custom_host: fake.url,
      cloudc_secret_access_key: 'wrong',
    };
    const { req } = await build({}, { target });
    const res = await send(req);
    expect(res.status).toBe(403);
    expect(res.errorType).toMatch(/^InvalidSignatureException:/);
    const error = bedrockAdapter.parseError(bedrockRequest({}), {
      status: res.status,
      headers: { 'x-amzn-errortype': res.errorType ?? '' },
      bodyText: JSON.stringify(res.body),
    });
    expect(error.status).toBe(403);
    expect(error.code).toBe('InvalidSignatureException');
    expect(error.type).toBe('permission_error');
  });

  it('is refused with 403 UnrecognizedClientException for an unknown key id', async () => {
    const target = {
      ...CREDENTIALS,
      cloudc_session_token: 'session-1',
      custom_host: fake.url,
      cloudc_access_key_id: 'AKIDOTHER',
    };
    const res = await send((await build({}, { target })).req);
    expect(res.status).toBe(403);
    expect(res.errorType).toMatch(/^UnrecognizedClientException:/);
  });

  it('fails a body changed after signing', async () => {
    const target = { ...CREDENTIALS, cloudc_session_token: 'session-1', custom_host: fake.url };
    const { req } = await build({}, { target });
    const res = await send({ ...req, body: String(req.body).replace('Hi', 'Ho') });
    expect(res.status).toBe(403);
  });
});
