import { describe, expect, it } from 'vitest';
import { findAdapter } from '../../src/providers/registry.js';
import type { AdapterRequest, ProviderAdapter } from '../../src/providers/types.js';
import { embeddingRequests } from '../../src/gateway/embeddings-fanout.js';
import type { AttemptInput } from '../../src/gateway/attempt.js';
import { buildRequest } from './operations.js';

async function sent(provider: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const req = {
    endpoint: 'chat',
    body: { model: 'm', messages: [{ role: 'user', content: 'hi' }], ...body },
    stream: false,
    target: { provider, api_key: 'k', custom_host: 'http://127.0.0.1:9' },
    forwardHeaders: {},
    clientHeaders: {},
    strictCompat: false,
  } as AdapterRequest<'chat'>;
  const upstream = await buildRequest(findAdapter(provider) as ProviderAdapter, req);
  return JSON.parse(String(upstream.body)) as Record<string, unknown>;
}

describe('the answer limit on OpenAI-wire providers', () => {
  it.each(['openai', 'groq', 'x-ai', 'cerebras'])(
    '%s gets max_completion_tokens as it is',
    async (provider) => {
      const body = await sent(provider, { max_completion_tokens: 200 });
      expect(body.max_completion_tokens).toBe(200);
      expect(body.max_tokens).toBeUndefined();
    },
  );

  it.each(['mistral-ai', 'deepseek', 'together-ai', 'openai-compatible'])(
    '%s, which knows only max_tokens, gets the limit under that name',
    async (provider) => {
      const body = await sent(provider, { max_completion_tokens: 200, max_tokens: 50 });
      expect(body.max_tokens).toBe(200);
      expect(body.max_completion_tokens).toBeUndefined();
      expect((await sent(provider, { max_tokens: 50 })).max_tokens).toBe(50);
    },
  );
});

describe('Mistral, which refuses fields it does not know (422 extra_forbidden)', () => {
  it('gets a stream without stream_options, which the gateway adds to every stream', async () => {
    const body = await sent('mistral-ai', { stream: true, stream_options: { include_usage: true } });
    expect(body.stream).toBe(true);
    expect(body).not.toHaveProperty('stream_options');
  });

  it('others keep stream_options', async () => {
    const body = await sent('groq', { stream: true, stream_options: { include_usage: true } });
    expect(body.stream_options).toEqual({ include_usage: true });
  });

  it("gets no user, store, service_tier or metadata, OpenAI's own bookkeeping; others get them", async () => {
    const fields = { user: 'end-user-7', store: true, service_tier: 'auto', metadata: { team: 'search' } };
    const body = await sent('mistral-ai', fields);
    for (const field of Object.keys(fields)) expect(body).not.toHaveProperty(field);
    expect(await sent('groq', fields)).toMatchObject(fields);
  });

  it('gets seed as random_seed, its name for it; others get seed', async () => {
    const body = await sent('mistral-ai', { seed: 42 });
    expect(body.random_seed).toBe(42);
    expect(body).not.toHaveProperty('seed');
    expect((await sent('groq', { seed: 42 })).seed).toBe(42);
  });
});

describe('Mistral embeddings, whose request has output_dimension and no dimensions (422 extra_forbidden)', () => {
  async function embedded(provider: string, body: Record<string, unknown>) {
    const req = {
      endpoint: 'embeddings',
      body: { model: 'codestral-embed', input: ['a', 'b'], ...body },
      stream: false,
      target: { provider, api_key: 'k', custom_host: 'http://127.0.0.1:9' },
      forwardHeaders: {},
      clientHeaders: {},
      strictCompat: false,
    } as AdapterRequest<'embeddings'>;
    const upstream = await buildRequest(findAdapter(provider) as ProviderAdapter, req);
    return JSON.parse(String(upstream.body)) as Record<string, unknown>;
  }

  it('gets dimensions as output_dimension, and no user; others get dimensions', async () => {
    const body = await embedded('mistral-ai', {
      dimensions: 256,
      user: 'end-user-7',
      encoding_format: 'base64',
    });
    expect(body).toEqual({
      model: 'codestral-embed',
      input: ['a', 'b'],
      output_dimension: 256,
      encoding_format: 'base64',
    });
    expect((await embedded('together-ai', { dimensions: 256 })).dimensions).toBe(256);
  });
});

describe('Mistral embeddings, which take at most 256 inputs and about 16,000 tokens a request', () => {
  const split = (provider: string, input: string[]) => {
    const adapter = findAdapter(provider) as ProviderAdapter;
    const request = {
      endpoint: 'embeddings',
      body: { model: 'mistral-embed', input },
      stream: false,
      target: { provider, api_key: 'k' },
      forwardHeaders: {},
      clientHeaders: {},
      strictCompat: false,
    } as AdapterRequest<'embeddings'>;
    const calls = embeddingRequests({ request, resolved: { adapter } } as unknown as AttemptInput);
    return calls?.map((call) => call.body.input.length);
  };

  it('are sent in calls within both bounds, others in one call', () => {
    // 300 short texts: more than 256
    expect(
      split(
        'mistral-ai',
        Array.from({ length: 300 }, (_, i) => `t${i}`),
      ),
    ).toEqual([256, 44]);
    // 40 texts of 3,000 bytes (about 1,000 tokens each, generously estimated): 40,000 in all
    const long = Array.from({ length: 40 }, () => 'x'.repeat(3_000));
    const sizes = split('mistral-ai', long)!;
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(40);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(16);
    expect(
      split(
        'together-ai',
        Array.from({ length: 300 }, (_, i) => `t${i}`),
      ),
    ).toBeUndefined();
  });
});

describe('Mistral, which wants the conversation to end with a user or tool message (400 otherwise)', () => {
  const CONTINUE = { role: 'user', content: 'Please continue.' };

  it('gets a minimal user turn after a trailing assistant or system message', async () => {
    const history = [
      { role: 'user', content: 'Write a haiku.' },
      { role: 'assistant', content: 'Autumn moonlight' },
    ];
    expect((await sent('mistral-ai', { messages: history })).messages).toEqual([...history, CONTINUE]);
    const systemOnly = [{ role: 'system', content: 'Say hi.' }];
    expect((await sent('mistral-ai', { messages: systemOnly })).messages).toEqual([...systemOnly, CONTINUE]);
  });

  it('is unchanged when it ends with the user or a tool result; others get it as it came', async () => {
    const toolTurn = [
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'abcdefghi', type: 'function', function: { name: 'w', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'abcdefghi', content: 'Sunny' },
    ];
    expect((await sent('mistral-ai', { messages: toolTurn })).messages).toEqual(toolTurn);
    const prefill = [
      { role: 'user', content: 'Write a haiku.' },
      { role: 'assistant', content: 'Autumn', prefix: true },
    ];
    expect((await sent('mistral-ai', { messages: prefill })).messages).toEqual(prefill);
    const trailing = [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello' },
    ];
    expect((await sent('groq', { messages: trailing })).messages).toEqual(trailing);
  });
});

describe('tool call ids on Mistral, which takes only 9 letters or digits (400 otherwise)', () => {
  const conversation = (first: string, second: string) => ({
    messages: [
      { role: 'user', content: 'weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: first, type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
          { id: second, type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: first, content: 'sunny' },
      { role: 'tool', tool_call_id: second, content: 'rainy' },
    ],
  });
  type Sent = {
    messages: Array<{ tool_calls?: Array<{ id: string }>; tool_call_id?: string }>;
  };

  it('sends ids from other providers (call_…, toolu_…) as 9 letters or digits, each call still paired with its result', async () => {
    const body = (await sent(
      'mistral-ai',
      conversation('call_Zx81bQ2d7TkP0a', 'toolu_01A09q90qw90lq917835lq9'),
    )) as Sent;
    const [a, b] = body.messages[1]!.tool_calls!.map((call) => call.id);
    for (const id of [a, b]) expect(id).toMatch(/^[a-zA-Z0-9]{9}$/);
    expect(a).not.toBe(b);
    expect(body.messages[2]!.tool_call_id).toBe(a);
    expect(body.messages[3]!.tool_call_id).toBe(b);
  });

  it('keeps Mistral’s own ids, and every id as it is for other providers', async () => {
    const own = (await sent('mistral-ai', conversation('gSIMJiOkT', 'D681PevKs'))) as Sent;
    expect(own.messages[1]!.tool_calls!.map((call) => call.id)).toEqual(['gSIMJiOkT', 'D681PevKs']);
    const other = (await sent('groq', conversation('call_1', 'call_2'))) as Sent;
    expect(other.messages[3]!.tool_call_id).toBe('call_2');
  });
});

describe('an assistant message sent back with its content_blocks (the gateway returns them when not strict)', () => {
  it.each(['openai', 'mistral-ai', 'groq'])(
    "%s gets the message without them, the gateway's own field",
    async (provider) => {
      const assistant = {
        role: 'assistant',
        content: '4',
        content_blocks: [
          { type: 'thinking', thinking: '2+2' },
          { type: 'text', text: '4' },
        ],
      };
      const body = await sent(provider, {
        messages: [{ role: 'user', content: '2+2?' }, assistant, { role: 'user', content: 'and 3+3?' }],
      });
      expect(body.messages).toEqual([
        { role: 'user', content: '2+2?' },
        { role: 'assistant', content: '4' },
        { role: 'user', content: 'and 3+3?' },
      ]);
    },
  );

  it('and without thinking content parts, keeping the others', async () => {
    const body = await sent('openai', {
      messages: [
        { role: 'user', content: '2+2?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: '2+2', signature: 's' },
            { type: 'text', text: '4' },
          ],
        },
        { role: 'assistant', content: [{ type: 'redacted_thinking', data: 'x' }], tool_calls: [] },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: '2+2?' },
      { role: 'assistant', content: [{ type: 'text', text: '4' }] },
      { role: 'assistant', content: null, tool_calls: [] },
    ]);
  });
});
