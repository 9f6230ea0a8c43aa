// The Messages codec on its own: chat chunks of a translated call become Anthropic's stream grammar (text,
// thinking with its signature, redacted thinking, several tool calls), native events go out as they came,
// and every error gets Anthropic's type for its status or the provider's own.
import { describe, expect, it } from 'vitest';
import { GatewayError, ProviderError } from '../../src/core/errors.js';
import type { ChatCompletion, ChatCompletionChunk } from '../../src/core/openai-types.js';
import { messagesCodec, messagesCodecFor } from '../../src/ingress/messages-codec.js';
import { expectAnthropicShape, expectMessagesGrammar, type StreamEvent } from './anthropic-shapes.js';

type Delta = ChatCompletionChunk['choices'][number]['delta'];

function chunk(
  delta: Delta,
  finish: ChatCompletionChunk['choices'][number]['finish_reason'] = null,
): ChatCompletionChunk {
  return {
    id: 'chatcmpl-abc',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'some-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

function framesOf(text: string): StreamEvent[] {
  return text
    .split('\n\n')
    .filter((frame) => frame !== '')
    .map((frame) => {
      const [eventLine, dataLine] = frame.split('\n');
      const event = JSON.parse(dataLine.slice('data: '.length)) as StreamEvent;
      expect(eventLine).toBe(`event: ${event.type}`);
      return event;
    });
}

/** The codec of a request that enabled thinking. */
const withThinking = messagesCodecFor({ thinking: { type: 'enabled', budget_tokens: 1024 } });

describe('a translated stream', () => {
  const chunks: ChatCompletionChunk[] = [
    chunk({ role: 'assistant', content: '' }),
    chunk({ content_blocks: [{ index: 0, delta: { type: 'thinking', thinking: 'Let me think' } }] }),
    chunk({ content_blocks: [{ index: 0, delta: { type: 'thinking', thinking: ' hard.' } }] }),
    chunk({ content_blocks: [{ index: 0, delta: { type: 'thinking', signature: 'sig-1' } }] }),
    chunk({ content_blocks: [{ index: 1, delta: { type: 'redacted_thinking', data: 'opaque' } }] }),
    chunk({ content: 'Checking ' }),
    chunk({ content: 'both.' }),
    chunk({
      tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'a', arguments: '' } }],
    }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x":' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
    chunk({
      tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: 'b', arguments: '{}' } }],
    }),
    chunk({}, 'tool_calls'),
    {
      ...chunk({}),
      choices: [],
      usage: {
        prompt_tokens: 30,
        completion_tokens: 12,
        total_tokens: 42,
        prompt_tokens_details: { cached_tokens: 10 },
      },
    },
  ];

  it('frames thinking, text and two tool calls as content blocks in order', () => {
    const encoder = withThinking.streamEncoder({});
    const text = chunks.map((c) => encoder.chunk(c, undefined) ?? '').join('') + encoder.end();
    const events = framesOf(text);
    expectMessagesGrammar(events);
    expect(events.filter((e) => e.type === 'content_block_start').map((e) => e.content_block)).toEqual([
      { type: 'thinking', thinking: '', signature: '' },
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'text', text: '' },
      { type: 'tool_use', id: 'call_1', name: 'a', input: {} },
      { type: 'tool_use', id: 'call_2', name: 'b', input: {} },
    ]);
    const deltas = events.filter((e) => e.type === 'content_block_delta').map((e) => [e.index, e.delta]);
    expect(deltas).toEqual([
      [0, { type: 'thinking_delta', thinking: 'Let me think' }],
      [0, { type: 'thinking_delta', thinking: ' hard.' }],
      [0, { type: 'signature_delta', signature: 'sig-1' }],
      [2, { type: 'text_delta', text: 'Checking ' }],
      [2, { type: 'text_delta', text: 'both.' }],
      [3, { type: 'input_json_delta', partial_json: '{"x":' }],
      [3, { type: 'input_json_delta', partial_json: '1}' }],
      [4, { type: 'input_json_delta', partial_json: '{}' }],
    ]);
    expect(events.find((e) => e.type === 'message_start')).toMatchObject({
      message: { id: 'msg_abc', model: 'some-model', content: [] },
    });
    expect(events.find((e) => e.type === 'message_delta')).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: {
        input_tokens: 20,
        output_tokens: 12,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 10,
      },
    });
  });

  // Anthropic answers thinking blocks only to a request that enabled thinking: a client of one that did not
  // reads the text first. The provider's thinking is left out, the other blocks numbered without it.
  it.each([
    ['no thinking', {}],
    ['thinking disabled', { thinking: { type: 'disabled' } }],
  ])('leaves the thinking out for a request with %s, numbering the blocks from 0', (_, request) => {
    const encoder = messagesCodecFor(request).streamEncoder(request);
    const text = chunks.map((c) => encoder.chunk(c, undefined) ?? '').join('') + encoder.end();
    const events = framesOf(text);
    expectMessagesGrammar(events);
    expect(
      events.filter((e) => e.type === 'content_block_start').map((e) => [e.index, e.content_block]),
    ).toEqual([
      [0, { type: 'text', text: '' }],
      [1, { type: 'tool_use', id: 'call_1', name: 'a', input: {} }],
      [2, { type: 'tool_use', id: 'call_2', name: 'b', input: {} }],
    ]);
    const deltas = events.filter((e) => e.type === 'content_block_delta').map((e) => [e.index, e.delta]);
    expect(deltas).toEqual([
      [0, { type: 'text_delta', text: 'Checking ' }],
      [0, { type: 'text_delta', text: 'both.' }],
      [1, { type: 'input_json_delta', partial_json: '{"x":' }],
      [1, { type: 'input_json_delta', partial_json: '1}' }],
      [2, { type: 'input_json_delta', partial_json: '{}' }],
    ]);
    expect(events.filter((e) => e.type === 'content_block_stop').map((e) => e.index)).toEqual([0, 1, 2]);
    // The reasoning was spent all the same: its tokens stay in output_tokens.
    expect(events.find((e) => e.type === 'message_delta')?.usage).toMatchObject({ output_tokens: 12 });
  });

  // thinking.display omitted: Anthropic sends each thinking block with empty thinking text, its signature
  // alone carrying it (no thinking_delta); redacted thinking and the other blocks are as they are.
  it('omits the thinking text, keeping blocks and signatures, when display is omitted', () => {
    const request = { thinking: { type: 'enabled', budget_tokens: 1024, display: 'omitted' } };
    const encoder = messagesCodecFor(request).streamEncoder(request);
    const text = chunks.map((c) => encoder.chunk(c, undefined) ?? '').join('') + encoder.end();
    const events = framesOf(text);
    expectMessagesGrammar(events);
    const starts = events.filter((e) => e.type === 'content_block_start').map((e) => e.content_block);
    expect(starts.slice(0, 2)).toEqual([
      { type: 'thinking', thinking: '', signature: '' },
      { type: 'redacted_thinking', data: 'opaque' },
    ]);
    const deltas = events.filter((e) => e.type === 'content_block_delta').map((e) => [e.index, e.delta]);
    expect(deltas.filter(([, delta]) => (delta as { type: string }).type === 'thinking_delta')).toEqual([]);
    expect(deltas[0]).toEqual([0, { type: 'signature_delta', signature: 'sig-1' }]);
    expect(deltas[1]).toEqual([2, { type: 'text_delta', text: 'Checking ' }]);
  });

  it('is still a whole message when the provider sent nothing but its end', () => {
    const encoder = messagesCodec.streamEncoder({});
    const events = framesOf((encoder.chunk(chunk({}, 'length'), undefined) ?? '') + encoder.end());
    expectMessagesGrammar(events);
    expect(events.find((e) => e.type === 'message_delta')?.delta).toEqual({
      stop_reason: 'max_tokens',
      stop_sequence: null,
    });
  });
});

// OpenAI answers a call forced by name (tool_choice naming the function) with finish_reason "stop", and
// some OpenAI-wire servers every tool call; Anthropic's answer with tool_use blocks stops for tool_use.
describe('tool calls that finished with stop', () => {
  const call = { id: 'call_1', type: 'function' as const, function: { name: 'f', arguments: '{"a":1}' } };

  it('end a streamed Message with the stop reason tool_use', () => {
    const encoder = messagesCodec.streamEncoder({});
    const text =
      (encoder.chunk(chunk({ role: 'assistant', tool_calls: [{ index: 0, ...call }] }), undefined) ?? '') +
      (encoder.chunk(chunk({}, 'stop'), undefined) ?? '') +
      encoder.end();
    expect(framesOf(text).find((e) => e.type === 'message_delta')?.delta).toEqual({
      stop_reason: 'tool_use',
      stop_sequence: null,
    });
  });

  it('end a Message with the stop reason tool_use', () => {
    const completion: ChatCompletion = {
      id: 'chatcmpl-named',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-x',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: null, refusal: null, tool_calls: [call] },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
    };
    const message = JSON.parse(
      messagesCodec.answer({ status: 200, body: completion, rawText: undefined, headers: {} }),
    );
    expect(message.stop_reason).toBe('tool_use');
  });
});

describe('a native stream', () => {
  it('goes out with the provider’s own text and nothing added at the end', () => {
    const encoder = messagesCodec.streamEncoder({});
    const raw = '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}';
    expect(encoder.chunk(JSON.parse(raw), raw)).toBe(`event: content_block_delta\ndata: ${raw}\n\n`);
    expect(encoder.end()).toBe('');
  });

  it('ends a broken stream with event: error', () => {
    const encoder = messagesCodec.streamEncoder({});
    const text = encoder.error(new GatewayError('upstream_unreachable', 'Could not reach anthropic'));
    expect(text.startsWith('event: error\ndata: ')).toBe(true);
    const body = JSON.parse(text.slice('event: error\ndata: '.length));
    expectAnthropicShape('ErrorResponse', body);
    expect(body.error.type).toBe('api_error');
  });
});

describe('a translated answer', () => {
  it('becomes a Message', () => {
    const completion: ChatCompletion = {
      id: 'chatcmpl-xyz',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-x',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Sure.',
            refusal: null,
            content_blocks: [{ type: 'thinking', thinking: 'hmm', signature: 's' }],
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
              { id: 'call_2', type: 'function', function: { name: 'g', arguments: 'not json' } },
            ],
          },
          finish_reason: 'tool_calls',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 },
    };
    const message = JSON.parse(
      withThinking.answer({ status: 200, body: completion, rawText: undefined, headers: {} }),
    );
    expectAnthropicShape('Message', message);
    expect(message).toEqual({
      id: 'msg_xyz',
      type: 'message',
      role: 'assistant',
      model: 'gpt-x',
      content: [
        { type: 'thinking', thinking: 'hmm', signature: 's' },
        { type: 'text', text: 'Sure.' },
        { type: 'tool_use', id: 'call_1', name: 'f', input: { a: 1 } },
        { type: 'tool_use', id: 'call_2', name: 'g', input: { _raw: 'not json' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: {
        input_tokens: 5,
        output_tokens: 7,
        cache_creation_input_tokens: null,
        cache_read_input_tokens: 0,
        cache_creation: null,
      },
    });
  });

  it.each([
    ['no thinking', {}],
    ['thinking disabled', { thinking: { type: 'disabled' } }],
  ])("leaves the provider's thinking out for a request with %s", (_, request) => {
    const completion: ChatCompletion = {
      id: 'chatcmpl-r1',
      object: 'chat.completion',
      created: 1,
      model: 'deepseek-reasoner',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Three.',
            refusal: null,
            reasoning_content: 'Count the r letters.',
            content_blocks: [{ type: 'thinking', thinking: 'hmm', signature: 's' }],
          } as ChatCompletion['choices'][number]['message'],
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 5, completion_tokens: 40, total_tokens: 45 },
    };
    const answer = { status: 200, body: completion, rawText: undefined, headers: {} };
    const message = JSON.parse(messagesCodecFor(request).answer(answer));
    expectAnthropicShape('Message', message);
    expect(message.content).toEqual([{ type: 'text', text: 'Three.' }]);
    expect(message.usage.output_tokens).toBe(40);
    const adaptive = JSON.parse(messagesCodecFor({ thinking: { type: 'adaptive' } }).answer(answer));
    expect(adaptive.content.map((block: { type: string }) => block.type)).toEqual(['thinking', 'text']);
    const omitted = JSON.parse(
      messagesCodecFor({ thinking: { type: 'adaptive', display: 'omitted' } }).answer(answer),
    );
    expect(omitted.content).toEqual([
      { type: 'thinking', thinking: '', signature: 's' },
      { type: 'text', text: 'Three.' },
    ]);
  });

  // A chat answer's prompt_tokens is the whole prompt; Anthropic's input_tokens is what neither was read
  // from the cache nor written to it (Bedrock's Converse and Anthropic's chat report writes).
  it('gives the prompt cache writes as cache_creation_input_tokens, apart from input_tokens', () => {
    const completion: ChatCompletion = {
      id: 'chatcmpl-cached',
      object: 'chat.completion',
      created: 1,
      model: 'amazon.nova-pro-v1:0',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Done.', refusal: null },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: {
        prompt_tokens: 1200,
        completion_tokens: 7,
        total_tokens: 1207,
        prompt_tokens_details: { cached_tokens: 200, cache_write_tokens: 900 },
      },
    };
    const message = JSON.parse(
      messagesCodec.answer({ status: 200, body: completion, rawText: undefined, headers: {} }),
    );
    expect(message.usage).toEqual({
      input_tokens: 100,
      output_tokens: 7,
      cache_creation_input_tokens: 900,
      cache_read_input_tokens: 200,
      cache_creation: { ephemeral_5m_input_tokens: 900, ephemeral_1h_input_tokens: 0 },
    });
  });

  // Bedrock's Converse answers cacheWriteInputTokens: 0 on a call that only read the cache: the chat usage
  // gives the reads and no writes, and Anthropic answers 0 writes, not null, for such a call.
  it('gives 0 cache writes, not null, when the provider reports its cache reads and wrote none', () => {
    const usage = {
      prompt_tokens: 1200,
      completion_tokens: 7,
      total_tokens: 1207,
      prompt_tokens_details: { cached_tokens: 1000 },
    };
    const completion: ChatCompletion = {
      id: 'chatcmpl-read',
      object: 'chat.completion',
      created: 1,
      model: 'anthropic.claude-sonnet-4',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Done.', refusal: null },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage,
    };
    const expected = {
      input_tokens: 200,
      output_tokens: 7,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 1000,
    };
    const message = JSON.parse(
      messagesCodec.answer({ status: 200, body: completion, rawText: undefined, headers: {} }),
    );
    expect(message.usage).toMatchObject(expected);
    const encoder = messagesCodec.streamEncoder({});
    const text =
      [chunk({ content: 'Done.' }, 'stop'), { ...chunk({}), choices: [], usage }]
        .map((c) => encoder.chunk(c, undefined) ?? '')
        .join('') + encoder.end();
    expect(framesOf(text).find((e) => e.type === 'message_delta')?.usage).toMatchObject(expected);
  });

  // Anthropic's usage breaks the writes down by how long they are kept (usage.cache_creation); the chat
  // usage gives those kept an hour as cache_write_1h_tokens (Anthropic's chat, Bedrock's cacheDetails).
  it('breaks the cache writes down by their TTL as usage.cache_creation, answered whole', () => {
    const usage = {
      prompt_tokens: 1200,
      completion_tokens: 7,
      total_tokens: 1207,
      prompt_tokens_details: { cached_tokens: 200, cache_write_tokens: 900, cache_write_1h_tokens: 600 },
    };
    const completion: ChatCompletion = {
      id: 'chatcmpl-ttl',
      object: 'chat.completion',
      created: 1,
      model: 'anthropic.claude-sonnet-4',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Done.', refusal: null },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage,
    };
    const expected = {
      input_tokens: 100,
      output_tokens: 7,
      cache_creation_input_tokens: 900,
      cache_read_input_tokens: 200,
      cache_creation: { ephemeral_5m_input_tokens: 300, ephemeral_1h_input_tokens: 600 },
    };
    const message = JSON.parse(
      messagesCodec.answer({ status: 200, body: completion, rawText: undefined, headers: {} }),
    );
    expectAnthropicShape('Message', message);
    expect(message.usage).toEqual(expected);
    const encoder = messagesCodec.streamEncoder({});
    const text =
      [chunk({ content: 'Done.' }, 'stop'), { ...chunk({}), choices: [], usage }]
        .map((c) => encoder.chunk(c, undefined) ?? '')
        .join('') + encoder.end();
    const events = framesOf(text);
    expectMessagesGrammar(events);
    // Streamed, message_delta has the counts alone, as Anthropic's: the breakdown is message_start's.
    const { cache_creation: _breakdown, ...counts } = expected;
    expect(events.find((e) => e.type === 'message_delta')?.usage).toEqual(counts);
    // Writes all of the default TTL when the provider names none kept an hour; null when it gives no
    // breakdown (the field is there, as Anthropic's always is, and as a stream's message_start has it before
    // the usage).
    const plain = (details?: object) =>
      JSON.parse(
        messagesCodec.answer({
          status: 200,
          body: { ...completion, usage: { ...usage, prompt_tokens_details: details } },
          rawText: undefined,
          headers: {},
        }),
      ).usage;
    expect(plain({ cached_tokens: 0, cache_write_tokens: 900 }).cache_creation).toEqual({
      ephemeral_5m_input_tokens: 900,
      ephemeral_1h_input_tokens: 0,
    });
    expect(plain({ cached_tokens: 0 }).cache_creation).toEqual({
      ephemeral_5m_input_tokens: 0,
      ephemeral_1h_input_tokens: 0,
    });
    expect(plain(undefined).cache_creation).toBeNull();
  });

  it('is relayed as it came when it is already Anthropic’s', () => {
    const rawText = '{"id":"msg_1", "type":"message"}';
    expect(messagesCodec.answer({ status: 200, body: JSON.parse(rawText), rawText, headers: {} })).toBe(
      rawText,
    );
  });
});

describe("errors' Anthropic types", () => {
  it.each([
    [
      new GatewayError('invalid_body', 'max_tokens is required', { param: 'max_tokens' }),
      'invalid_request_error',
    ],
    [new GatewayError('invalid_api_key', 'bad key'), 'authentication_error'],
    [new GatewayError('payload_too_large', 'too large'), 'request_too_large'],
    [new GatewayError('request_timeout', 'slow'), 'timeout_error'],
    [new GatewayError('hooks_failed', 'denied'), 'invalid_request_error'],
    [
      new ProviderError({
        status: 529,
        provider: 'anthropic',
        message: 'Overloaded',
        code: 'overloaded_error',
      }),
      'overloaded_error',
    ],
    [
      new ProviderError({
        status: 429,
        provider: 'bedrock',
        message: 'Slow down',
        code: 'ThrottlingException',
      }),
      'rate_limit_error',
    ],
    [new ProviderError({ status: 503, provider: 'openai', message: 'down' }), 'api_error'],
  ])('%s → %s', (error, type) => {
    const body = JSON.parse(messagesCodec.errorBody(error));
    expectAnthropicShape('ErrorResponse', body);
    expect(body).toEqual({ type: 'error', error: { type, message: error.message } });
  });
});
